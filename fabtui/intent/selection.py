"""The selection database (`configs/selection/*.toml`) and the fleet check: which combination
of hardware, firmware, drivers and OS every node and switch runs, against the validated and
not-recommended rows, each with its source.

`load_matrix` reads the class files (`file:line` problems for a row without its keys, status,
source or date); `combinations` turns parsed probe readings (the same `Readings` as drift) into
the combinations each class judges; `check` matches them. A combination no row matches is a
finding when the class has rows for that hardware (its first key), a note when it has none; an
`unverified` row is a note. Reads files; runs nothing.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabtui.errors import InputError, Problem
from fabtui.intent.scenario import configs_dir
from fabtui.paths import display_path
from fabtui.topology.graph import FabricGraph

STATUSES = ("validated", "not-recommended", "unverified")


@dataclass(frozen=True)
class Row:
    """One reviewed combination."""

    values: dict[str, str]
    status: str
    source: str
    date: str
    note: str
    where: str
    """`file:line` of the row, for the report."""

    def matches(self, combo: Mapping[str, str]) -> bool:
        return all(fnmatch.fnmatchcase(combo.get(key, ""), pattern)
                   for key, pattern in self.values.items())


@dataclass(frozen=True)
class MatrixClass:
    """One class file: its keys and rows."""

    name: str
    description: str
    keys: tuple[str, ...]
    rows: tuple[Row, ...]
    fix: str = ""
    """How to reach a validated combination: `{key}` the running values, `{target}` the part
    of the component after `:` (a NIC, a port), `{validated[key]}` the first validated row's."""


def load_matrix(folder: Path | None = None) -> dict[str, MatrixClass]:
    """Every class file of `folder` (default: the shipped `configs/selection`), by class.
    Raises `InputError` naming the file and line of every problem."""
    where = folder or configs_dir() / "selection"
    classes: dict[str, MatrixClass] = {}
    problems: list[Problem] = []
    for path in sorted(where.glob("*.toml")):
        label = display_path(path)
        text = path.read_text(encoding="utf-8")
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            match = re.search(r"line (\d+)", str(exc))
            problems.append(Problem(label, int(match.group(1)) if match else None, str(exc)))
            continue
        row_lines = [n for n, line in enumerate(text.splitlines(), start=1)
                     if line.strip() == "[[row]]"]
        keys = tuple(str(k) for k in data.get("keys", []))
        name = str(data.get("class", path.stem))
        if not keys:
            problems.append(Problem(label, None, "no `keys`: the fields a row matches on"))
            continue
        rows = []
        for index, raw in enumerate(data.get("row", [])):
            line = row_lines[index] if index < len(row_lines) else None
            missing = [k for k in (*keys, "status", "source", "date") if not raw.get(k)]
            if missing:
                problems.append(Problem(label, line, f"row without {', '.join(missing)}"))
                continue
            if raw["status"] not in STATUSES:
                problems.append(Problem(label, line, f"status {raw['status']!r}: one of "
                                        f"{', '.join(STATUSES)}"))
                continue
            rows.append(Row({k: str(raw[k]) for k in keys}, str(raw["status"]),
                            str(raw["source"]), str(raw["date"]), str(raw.get("note", "")),
                            f"{label}:{line}" if line else label))
        classes[name] = MatrixClass(name, str(data.get("description", "")), keys, tuple(rows),
                                    str(data.get("fix", "")))
    if problems:
        raise InputError(problems)
    return classes


@dataclass(frozen=True)
class Combination:
    """What one component runs, for one class."""

    cls: str
    component: str
    values: dict[str, str]

    def shown(self) -> str:
        return " × ".join(f"{k} {v}" for k, v in self.values.items())


@dataclass(frozen=True)
class FleetLine:
    """One combination the matrix does not validate."""

    component: str
    cls: str
    combination: str
    verdict: str
    """`not-recommended`, `outside the matrix`, `unverified` or `not covered`."""
    source: str
    fix: str

    @property
    def device(self) -> str:
        return self.component.split(":")[0]

    def text(self) -> str:
        return (f"{self.component}: {self.combination} is {self.verdict} ({self.cls}); "
                f"{self.source}; fix: {self.fix}")


@dataclass
class FleetReport:
    """Findings (not-recommended, outside the matrix), notes, and what was checked."""

    findings: list[FleetLine] = field(default_factory=list)
    notes: list[FleetLine] = field(default_factory=list)
    checked: int = 0
    unread: list[tuple[str, str]] = field(default_factory=list)


def check(matrix: Mapping[str, MatrixClass], combos: list[Combination]) -> FleetReport:
    """Judge every combination against its class's rows (the first matching row wins)."""
    report = FleetReport()
    for combo in combos:
        klass = matrix.get(combo.cls)
        if klass is None:
            continue
        report.checked += 1
        row = next((r for r in klass.rows if r.matches(combo.values)), None)
        first = klass.keys[0]
        same_hardware = [r for r in klass.rows
                         if fnmatch.fnmatchcase(combo.values.get(first, ""), r.values[first])]
        good = [r for r in same_hardware if r.status == "validated"]
        fix = _fix(klass, combo, good)
        if row is None:
            line = FleetLine(combo.component, combo.cls, combo.shown(),
                             "outside the matrix" if same_hardware else "not covered",
                             f"no row of {klass.name} matches", fix)
            (report.findings if same_hardware else report.notes).append(line)
        elif row.status == "not-recommended":
            report.findings.append(FleetLine(
                combo.component, combo.cls, combo.shown(), "not recommended",
                f"{row.source} ({row.where}, reviewed {row.date})"
                + (f"; {row.note}" if row.note else ""), fix))
        elif row.status == "unverified":
            report.notes.append(FleetLine(
                combo.component, combo.cls, combo.shown(), "unverified",
                f"{row.where}: {row.note or row.source}", "check the source, then mark the "
                "row validated or not-recommended"))
    return report


def _fix(klass: MatrixClass, combo: Combination, good: list[Row]) -> str:
    """The class's fix for `combo` toward its first validated row (with the other validated
    choices named), or a plain pointer when the class gives no fix or nothing is validated."""
    if not good:
        return "no validated combination for this hardware in the matrix yet"
    choices = "; ".join(" × ".join(f"{k} {v}" for k, v in r.values.items()) for r in good)
    if not klass.fix:
        return f"move to a validated combination: {choices}"
    target = combo.component.split(":", 1)[1] if ":" in combo.component else combo.component
    try:
        text = klass.fix.format_map({**combo.values, "target": target,
                                     "validated": good[0].values})
    except (KeyError, IndexError, ValueError):
        return f"move to a validated combination: {choices}"
    return text + (f" (validated: {choices})" if len(good) > 1 else "")


def combinations(graph: FabricGraph, readings: Mapping[str, Mapping[str, Any]],
                 report: FleetReport) -> list[Combination]:
    """What every NIC, node and switch runs, per class, from parsed readings (`Readings` of
    `fabtui.intent.drift`); a reading missing or failed is listed in `report.unread`."""
    from fabtui.intent.drift import Unreadable

    def reading(target: str, probe: str) -> dict[str, Any] | None:
        value = readings.get(target, {}).get(probe)
        if isinstance(value, Unreadable) or value is None:
            report.unread.append((target, f"{probe}: " + (
                value.reason if isinstance(value, Unreadable) else "not read")))
            return None
        return dict(value)

    combos: list[Combination] = []
    for hostname, node in graph.nodes.items():
        for nic in node.nics:
            target = f"{hostname}:{nic.name}"
            model = nic.model or "unknown"
            info = reading(target, "nic.ethtool_info")
            devinfo = reading(target, "nic.ibv_devinfo")
            firmware = None
            if devinfo is not None:
                firmware = devinfo.get("devices", {}).get(nic.name, {}).get("fw_ver")
            if firmware is None and info is not None:
                firmware = info.get("firmware")
            if firmware:
                combos.append(Combination("nic-firmware", target,
                                          {"nic": model, "firmware": firmware}))
            optic = readings.get(target, {}).get("nic.mlxlink")
            if optic is not None and not isinstance(optic, Unreadable):
                part = (optic.get("module") or {}).get("vendor_part_number")
                if part:
                    combos.append(Combination("optics", target, {"part": part,
                                                                 "device": "NIC"}))
            if info is not None and info.get("version") and firmware:
                combos.append(Combination("driver-firmware", target,
                                          {"driver": info["version"], "nic": model,
                                           "firmware": firmware}))
        smi = reading(hostname, "gpu.smi_q")
        if smi is not None:
            for product in sorted({g.get("product_name") or "unknown"
                                   for g in smi.get("gpus", [])}):
                combos.append(Combination("gpu-driver", hostname, {
                    "gpu": product, "driver": smi.get("driver_version") or "unknown",
                    "cuda": smi.get("cuda_version") or "unknown"}))
    for name in graph.switches:
        version = reading(name, "switch.version")
        switch_model = "unknown"
        if version is not None:
            switch_model = version.get("model") or "unknown"
            combos.append(Combination("switch-os", name, {
                "model": switch_model, "os": version.get("os") or "unknown",
                "version": version.get("version") or "unknown"}))
        dom = readings.get(name, {}).get("switch.dom_all")
        if dom is None or isinstance(dom, Unreadable):
            continue
        for port, module in dom.get("interfaces", {}).items():
            part = module.get("part_number")
            if part:
                combos.append(Combination("optics", f"{name}:{port}",
                                          {"part": part, "device": switch_model}))
    return combos
