"""The shipped case library keeps the shape users and the benchmark rely on.

`cases/*.md` is imported by `fabtui cases import` and searched by `fabtui cases search`; the
relevance benchmark scores queries against it. These tests read the files as written (front
matter through the project's YAML loader, `##` headings by the aliases of docs/case-format.md) so
that a case edited by hand cannot silently lose a required field or section, a relevance query
cannot name a case that is not shipped, and the demo's planted faults keep a case that describes
them with the demo fabric's own component ids (what `fabtui cases similar` matches on).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from fabtui.topology.loader import load_topology
from fabtui.yamldoc import load_yaml, parse_yaml

REPO = Path(__file__).resolve().parent.parent
CASES = sorted(p for p in (REPO / "cases").glob("*.md") if p.name != "README.md")
QUERIES = REPO / "benchmarks" / "relevance" / "queries.yaml"

_ALIASES = {  # docs/case-format.md, "Sections"
    "Symptom": ("现象", "症状"), "Root cause": ("根因", "根本原因"),
    "Resolution": ("解决方案", "处理", "修复"), "Summary": ("概述", "摘要"), "Impact": ("影响",),
    "Environment": ("环境",), "Evidence": ("指标", "证据"), "Timeline": ("时间线",),
    "Localization": ("定位过程", "排查过程"), "Trigger": ("触发",), "Detection": ("发现",),
    "Tuning": ("调优",), "Reusable config": ("可复用配置",), "Risks": ("风险", "注意事项"),
    "Action items": ("改进项", "后续行动"), "Lessons": ("经验", "复盘", "经验教训"),
}
_CANON = {alias: name for name, aliases in _ALIASES.items() for alias in (name, *aliases)}
_CLASSES = {"nccl-hang", "busbw-low", "slow-node", "pfc-storm", "fec-errors", "optic-failure",
            "link-flap", "port-drops", "rank-mapping", "gdr-not-effective",
            "multi-job-interference", "ib-completion-error", "roce-config-mismatch", "gpu-xid",
            "other"}
_ENV_KEYS = {"gpu", "nic", "switch", "optic", "driver", "cuda", "nccl", "ofed", "firmware", "os",
             "topology", "scale"}


def _split(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Front matter as data and the canonical names of the `##` sections, in order."""
    text = path.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n(.*)\Z", text, re.S)
    assert match, f"{path.name}: no YAML front matter between --- lines"
    data = parse_yaml(match.group(1), path.name).data
    assert isinstance(data, dict), f"{path.name}: front matter is not a mapping"
    headings = re.findall(r"^## (.+?)\s*$", match.group(2), re.M)
    unknown = [h for h in headings if h not in _CANON]
    assert not unknown, f"{path.name}: headings not in docs/case-format.md: {unknown}"
    return data, [_CANON[h] for h in headings]


def _cases() -> dict[str, tuple[dict[str, Any], list[str]]]:
    return {path.stem: _split(path) for path in CASES}


def test_the_library_has_the_cases_the_issue_asks_for() -> None:
    cases = _cases()
    assert len(cases) >= 30
    assert sum(1 for data, _ in cases.values() if data.get("lang") == "zh") >= 8
    classes = {data["symptom_class"] for data, _ in cases.values()}
    assert classes >= _CLASSES - {"other"}, f"no case for {_CLASSES - {'other'} - classes}"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_each_case_has_the_required_fields_and_sections(path: Path) -> None:
    data, sections = _split(path)
    assert data.get("id") == path.stem, "id must equal the file name"
    assert re.fullmatch(r"[A-Za-z0-9._-]+", data["id"])
    assert isinstance(data.get("title"), str) and data["title"].strip()
    assert isinstance(data.get("tags"), list) and data["tags"]
    for required in ("Symptom", "Root cause", "Resolution"):
        assert required in sections, f"missing section {required}"
    assert len(sections) == len(set(sections)), f"a section appears twice: {sections}"
    assert data.get("status", "resolved") in {"draft", "resolved", "unresolved"}
    assert data.get("symptom_class", "other") in _CLASSES
    assert data.get("lang", "en") in {"en", "zh"}
    for key in ("opened", "closed"):
        if key in data:
            assert re.match(r"\d{4}-\d\d-\d\d", str(data[key])), f"{key} is not an ISO date"
    env = data.get("environment", {})
    assert isinstance(env, dict) and set(env) <= _ENV_KEYS, f"environment keys {set(env)}"
    for key in ("components", "error_codes", "references", "runbooks"):
        assert isinstance(data.get(key, []), list), f"{key} must be a list"
    for name in data.get("runbooks", []):  # a case points at a procedure that is shipped
        assert (REPO / "runbooks" / f"{name}.md").is_file(), f"no runbook {name}"


def test_relevance_queries_name_shipped_cases() -> None:
    queries = load_yaml(QUERIES).data
    assert isinstance(queries, list) and len(queries) >= 40
    shipped = {path.stem for path in CASES}
    for entry in queries:
        assert set(entry) == {"query", "expected", "lang"}, entry
        assert entry["expected"] in shipped, f"{entry['query']!r} expects unknown case"
        assert entry["lang"] in {"en", "zh"}
        has_cjk = re.search(r"[\u4e00-\u9fff]", entry["query"]) is not None
        assert has_cjk == (entry["lang"] == "zh"), f"lang of {entry['query']!r}"
    texts = [entry["query"].strip().lower() for entry in queries]
    assert len(texts) == len(set(texts)), "a query appears twice"
    assert {"allreduce slow rail 3", "光模块 误码"} <= set(texts)


def _demo_ids() -> set[str]:
    """Every component id of the demo fabric in the case format's terms."""
    topo = load_topology(REPO / "topology" / "demo.yaml").topology
    ids: set[str] = set()
    for node in topo.nodes:
        ids.add(node.hostname)
        ids.update(f"{node.hostname}:gpu{gpu.index}" for gpu in node.gpus)
        ids.update(f"{node.hostname}:{nic.name}" for nic in node.nics)
        ids.update(f"rail{nic.rail}" for nic in node.nics)
    ids.update(switch.name for switch in topo.switches)
    for link in topo.links:
        ids.update({str(link.a), str(link.b)})
        if link.optic:
            ids.add(f"optic:{link.optic}")
    return ids


@pytest.mark.parametrize("scenario,symptom_class", [("nccl-hang", "nccl-hang"),
                                                    ("optic-degrading", "optic-failure")])
def test_a_shipped_case_describes_the_demo_fault(scenario: str, symptom_class: str) -> None:
    expect = load_yaml(REPO / "topology" / "scenarios" / f"{scenario}.yaml").data["expect"]
    planted = {expect["component"], f"optic:{expect['optic']}"}
    if "port" in expect:
        planted.add(expect["port"])
    demo = _demo_ids()
    assert planted <= demo
    matching = [cid for cid, (data, _) in _cases().items()
                if data.get("symptom_class") == symptom_class
                and planted <= set(data.get("components", []))]
    assert matching, f"no {symptom_class} case names {sorted(planted)}"
    for cid in matching:
        components = set(_cases()[cid][0]["components"])
        assert components <= demo, f"{cid}: not demo ids: {sorted(components - demo)}"
