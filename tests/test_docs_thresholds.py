"""docs/thresholds.md lists every catalog threshold with the catalog's values: it cannot rot."""

from __future__ import annotations

import re

from fabtui.paths import shipped_dir
from fabtui.probes.catalog import load_catalog


def _rows() -> set[tuple[str, str, str, str, str]]:
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "thresholds.md").read_text(encoding="utf-8")
    rows = set()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and re.fullmatch(r"`[a-z0-9_.-]+`", cells[0]):
            rows.add((cells[0].strip("`"), cells[1].strip("`"), cells[2], cells[3], cells[5]))
    return rows


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def test_every_catalog_threshold_is_in_the_doc_with_its_values() -> None:
    rows = _rows()
    missing = []
    for probe in load_catalog([shipped_dir("probes")]).values():
        for threshold in probe.thresholds:
            row = (probe.name, threshold.metric, _number(threshold.warn),
                   _number(threshold.fail), threshold.hardware)
            if row not in rows:
                missing.append(" | ".join(row))
    assert not missing, "docs/thresholds.md lacks or differs for:\n" + "\n".join(missing)


def test_the_doc_lists_no_threshold_the_catalog_lacks() -> None:
    catalog = {(p.name, t.metric, _number(t.warn), _number(t.fail), t.hardware)
               for p in load_catalog([shipped_dir("probes")]).values() for t in p.thresholds}
    assert not _rows() - catalog
