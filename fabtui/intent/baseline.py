"""Baselines: each device's versions and settings recorded at a known-good moment, and what
changed since, per node, port and job.

`facts` flattens parsed readings (the `Readings` drift and the fleet check use) into
`Fact`s: component (a node, a NIC `node:mlx5_N`, a switch, a switch port `leaf:EthernetN`),
setting, value. `BaselineStore` keeps named snapshots in the workspace's data folder (SQLite,
`baselines.sqlite`: one row per baseline, its facts as JSON), each marked good when drift and
the fleet check found nothing when it was taken, every link was up with its optics and error
counters within the probes' limits and every device could be read (`Judgement` says what was
judged and what was not); a good one is never replaced by a state that
is not good unless asked (`record(replace=True)`), so `--since-good` keeps its known-good
state through a re-recording during an incident. `changes` compares two snapshots; `in_scope`
narrows them to a job (its nodes, their NICs and the switch ports those NICs are cabled to).
Writes only the store's file.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabtui.errors import RequestError
from fabtui.model.verdict import Verdict
from fabtui.topology.graph import FabricGraph

if TYPE_CHECKING:
    from fabtui.intent.drift import DriftReport
    from fabtui.intent.selection import FleetReport
    from fabtui.model.probe import ProbeResult

STORE_NAME = "baselines.sqlite"

LINK_PLAN: list[tuple[str, str, str | None]] = [
    ("nic.ibv_devinfo", "nic", None), ("nic.mlxlink", "nic", None),
    ("switch.dom_all", "switch", None), ("switch.counters", "switch", None)]
"""The probes whose own limits judge the links when a baseline is recorded: each NIC port's
state (ibv_devinfo), link, BER and optic (mlxlink), every switch optic (transceiver DOM) and
port state and error counters (interface counters): (probe, target kind, switch flavor)."""

NOT_JUDGED = "traffic under load (PFC pauses, ECN marks, drops), GPU and NVLink health, bandwidth"
"""What a baseline's verdict does not look at (said with every good verdict)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS baseline (
    name TEXT PRIMARY KEY,
    recorded_at TEXT NOT NULL,
    good INTEGER NOT NULL,
    findings INTEGER NOT NULL,
    scenario TEXT NOT NULL,
    topology TEXT NOT NULL,
    facts TEXT NOT NULL
)
"""


@dataclass(frozen=True)
class Baseline:
    """One recorded state."""

    name: str
    recorded_at: str
    good: bool
    findings: int
    """Drift lines plus fleet findings when it was recorded (0 for a good one)."""
    scenario: str
    topology: str
    facts: dict[str, str]
    """`component\\tsetting` -> value."""


@dataclass(frozen=True)
class Change:
    """One setting or version that differs from the baseline."""

    component: str
    setting: str
    before: str | None
    """None: not there when the baseline was recorded."""
    after: str | None
    """None: not read now (gone, or its reading failed)."""

    @property
    def device(self) -> str:
        return self.component.split(":")[0]

    def text(self) -> str:
        before = "absent" if self.before is None else self.before
        after = "absent" if self.after is None else self.after
        return f"{self.component}: {self.setting} {before} -> {after}"


class GoodBaselineKept(RequestError):
    """`BaselineStore.record` refused to replace the good baseline `kept` with a state that is
    not good (nothing was written)."""

    def __init__(self, kept: Baseline) -> None:
        self.kept = kept
        super().__init__(f"baseline {kept.name!r} is a good state (recorded {kept.recorded_at}): "
                         "not replaced by one that is not good")


_NO_ANSWER = frozenset({"timeout", "unreachable", "auth", "host-key"})
"""Transport errors (`ErrorKind` values) that mean the device itself was not read."""


@dataclass(frozen=True)
class Judgement:
    """Why a recorded state is good or not: its configuration (drift against the intent, the
    fleet check against the selection database), its links (`LINK_PLAN`'s failed metrics) and
    whether every device answered. A baseline recorded while a link is down or a switch does
    not answer is not a known-good state, however clean its configuration. A reading the
    catalog cannot take on a device (no command for its flavor, a command it rejects) does not
    make a state bad: it is said as not judged."""

    drift: DriftReport
    fleet: FleetReport
    links: dict[str, list[str]]
    """Link component (`node:mlx5_N`, `switch:port`) -> what failed on it."""
    unreadable: dict[str, list[str]]
    """Target -> `probe: why` for each reading lost because the device did not answer
    (timeout, unreachable, refused credentials or host key)."""
    not_taken: dict[str, list[str]]
    """Target -> `probe: why` for each reading the probe could not take there."""
    nic_ports: int
    switches: int
    """How many NIC ports and switches a link probe read."""

    @classmethod
    def of(cls, drift: DriftReport, fleet: FleetReport,
           results: Iterable[ProbeResult]) -> Judgement:
        """Judge the results of one recording (every probe it ran, `LINK_PLAN`'s included)."""
        kinds = {p: kind for p, kind, _ in LINK_PLAN}
        taken = list(results)
        unreadable: dict[str, list[str]] = {}
        not_taken: dict[str, list[str]] = {}
        read: dict[str, set[str]] = {"nic": set(), "switch": set()}
        for result in taken:
            if result.error is not None or result.parsed is None:
                why = f"{result.probe}: {result.error or 'no output parsed'}"
                lost = any(str(t.error) in _NO_ANSWER for t in result.raw if t.error)
                (unreadable if lost else not_taken).setdefault(result.target, []).append(why)
            elif result.probe in kinds:
                read[kinds[result.probe]].add(result.target)
        return cls(drift, fleet, link_faults(taken), dict(sorted(unreadable.items())),
                   dict(sorted(not_taken.items())), len(read["nic"]), len(read["switch"]))

    @property
    def findings(self) -> int:
        """Drift lines, fleet findings, failing links and devices that did not answer."""
        return (len(self.drift.lines) + len(self.fleet.findings) + len(self.links)
                + len(self.unreadable))

    @property
    def good(self) -> bool:
        return self.findings == 0

    def judged(self) -> str:
        """What a good verdict rests on (`not_judged`: what it does not look at)."""
        return (f"no drift from {self.drift.scenario}, nothing outside the selection database, "
                f"links up with optics and error counters within limits on the "
                f"{self.nic_ports} NIC ports and {self.switches} switches read, every device "
                "answered")

    def not_judged(self) -> str:
        """`NOT_JUDGED`, and the readings the probes could not take (named)."""
        if not self.not_taken:
            return NOT_JUDGED
        return (f"{NOT_JUDGED}; readings the probes cannot take on "
                f"{_named(list(self.not_taken))} (`--json` says why)")

    def problems(self) -> str:
        """What makes the state not good, counted, the first few of each named."""
        parts = [f"{len(self.drift.lines)} drift line(s)" if self.drift.lines else "",
                 f"{len(self.fleet.findings)} fleet finding(s)" if self.fleet.findings else "",
                 f"{len(self.links)} link(s) down or failing: {_named(list(self.links))}"
                 if self.links else "",
                 f"{len(self.unreadable)} not answering: {_named(list(self.unreadable))}"
                 if self.unreadable else ""]
        return "; ".join(p for p in parts if p) or "nothing found"


def _named(items: list[str], shown: int = 3) -> str:
    more = f", +{len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def link_faults(results: Iterable[ProbeResult]) -> dict[str, list[str]]:
    """The failed metrics of `LINK_PLAN`'s probes, per link component (a NIC, a switch port;
    an optic's lanes are its port's): component -> `metric value` texts, each once."""
    probes = {p for p, _, _ in LINK_PLAN}
    found: dict[str, list[str]] = {}
    for result in results:
        if result.probe not in probes:
            continue
        for metric in result.metrics:
            if metric.verdict is not Verdict.FAIL:
                continue
            component = re.sub(r"/lane\d+$", "", metric.component)
            text = f"{metric.name} {metric.value}{' ' + metric.unit if metric.unit else ''}"
            texts = found.setdefault(component, [])
            if text not in texts:
                texts.append(text)
    return dict(sorted(found.items()))


def _key(component: str, setting: str) -> str:
    return f"{component}\t{setting}"


def facts(graph: FabricGraph, readings: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Every version and setting the readings hold, flattened (see the module docstring)."""
    from fabtui.intent.drift import Unreadable

    found: dict[str, str] = {}

    def put(component: str, setting: str, value: Any) -> None:
        if value is not None and value != "":
            found[_key(component, setting)] = str(value)

    for target, probes in readings.items():
        for probe, parsed in probes.items():
            if isinstance(parsed, Unreadable) or parsed is None:
                continue
            data = dict(parsed)
            nic = target.partition(":")[2]
            if probe == "nic.qos":
                put(target, "trust", data.get("trust"))
                put(target, "pfc", ",".join(str(p) for p in data.get("pfc_enabled", [])))
            elif probe == "nic.dcqcn":
                for path, lines in data.get("files", {}).items():
                    put(target, path.rsplit("/ecn/", 1)[-1], lines[0] if lines else None)
            elif probe == "nic.ibv_devinfo":
                hca = data.get("devices", {}).get(nic, {})
                put(target, "firmware", hca.get("fw_ver"))
                for port in hca.get("ports", {}).values():
                    put(target, "active_mtu", port.get("active_mtu"))
                    break
            elif probe == "nic.show_gids":
                usable = [g["index"] for g in data.get("gids", []) if g.get("dev") == nic
                          and str(g.get("version") or "").lower() == "v2" and g.get("ipv4")]
                put(target, "roce_v2_ipv4_gid_index", ",".join(str(i) for i in usable))
            elif probe == "nic.mlxlink":
                put(target, "optic", (data.get("module") or {}).get("vendor_part_number"))
            elif probe == "nic.ethtool_info":
                put(target, "driver", data.get("version"))
            elif probe == "host.nccl_conf":
                for key, value in data.get("settings", {}).items():
                    put(target, f"nccl.conf {key}", value)
            elif probe == "gpu.smi_q":
                put(target, "gpu driver", data.get("driver_version"))
                put(target, "cuda", data.get("cuda_version"))
                for gpu in data.get("gpus", []):
                    put(target, f"GPU {gpu.get('minor_number', '?')} vbios",
                        gpu.get("vbios_version"))
            elif probe == "switch.version":
                put(target, "os", f"{data.get('os')} {data.get('version')}")
                put(target, "model", data.get("model"))
            elif probe == "switch.running_config":
                _config_db(target, data.get("tables", {}), put)
            elif probe == "switch.running_config_eos":
                for section, lines in data.get("sections", {}).items():
                    where = f"{target}:{section.split()[1]}" \
                        if section.startswith("interface ") else target
                    for line in lines:
                        put(where, f"config {section + ' / ' if section else ''}{line}",
                            "present")
            elif probe == "switch.dom_all":
                for port, module in data.get("interfaces", {}).items():
                    put(f"{target}:{port}", "optic", module.get("part_number"))
    return dict(sorted(found.items()))


def _config_db(switch: str, tables: Mapping[str, Mapping[str, Mapping[str, str]]],
               put: Any) -> None:
    for table, rows in tables.items():
        for key, fields in rows.items():
            port = key.split("|")[0]
            for name, value in fields.items():
                if table == "CABLE_LENGTH":
                    put(f"{switch}:{name}", f"{table}|{key}", value)
                elif port.startswith("Ethernet"):
                    put(f"{switch}:{port}", f"{table}|{key} {name}", value)
                else:
                    put(switch, f"{table}|{key} {name}", value)


def changes(before: Mapping[str, str], after: Mapping[str, str],
            read_now: Iterable[str] | None = None) -> list[Change]:
    """What differs between two snapshots' facts. A fact missing now on a component that was
    not read now (`read_now`: the devices read) is left out: not read is not changed."""
    devices = set(read_now) if read_now is not None else None
    found = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        component, setting = key.split("\t", 1)
        if new is None and devices is not None and component.split(":")[0] not in devices:
            continue
        found.append(Change(component, setting, old, new))
    return found


def in_scope(graph: FabricGraph, nodes: Iterable[str]) -> set[str]:
    """The components a job on `nodes` uses: the nodes, their NICs and the switch ports those
    NICs are cabled to, and those switches themselves (their global settings)."""
    scope: set[str] = set()
    for node in nodes:
        scope.add(node)
        for nic in graph.nodes[node].nics if node in graph.nodes else ():
            scope.add(f"{node}:{nic.name}")
            far = graph.far_end(f"{node}:{nic.name}")
            if far is not None:
                scope.add(far)
                scope.add(far.split(":")[0])
    return scope


class BaselineStore:
    """Named baselines in one SQLite file (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute("PRAGMA busy_timeout = 5000")
        with self._db:
            self._db.execute(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def record(self, name: str, facts_now: Mapping[str, str], *, findings: int, scenario: str,
               topology: str, replace: bool = False) -> Baseline:
        """Store the state as `name`, good when `findings` is 0, and return it. A baseline of
        that name is replaced, except a good one by a state that is not good: that raises
        `GoodBaselineKept` and writes nothing, unless `replace`."""
        baseline = Baseline(name, datetime.now(UTC).isoformat(timespec="seconds"),
                            findings == 0, findings, scenario, topology, dict(facts_now))
        with self._db:
            # the check and the write in one write transaction: two recordings of one name
            # cannot both pass the check
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute("SELECT * FROM baseline WHERE name = ?", (name,)).fetchone()
            old = _baseline(row) if row else None
            if old is not None and old.good and not baseline.good and not replace:
                raise GoodBaselineKept(old)
            self._db.execute(
                "INSERT OR REPLACE INTO baseline VALUES (?, ?, ?, ?, ?, ?, ?)",
                (name, baseline.recorded_at, int(baseline.good), findings, scenario, topology,
                 json.dumps(baseline.facts, sort_keys=True)))
        return baseline

    def get(self, name: str) -> Baseline | None:
        row = self._db.execute("SELECT * FROM baseline WHERE name = ?", (name,)).fetchone()
        return _baseline(row) if row else None

    def latest_good(self) -> Baseline | None:
        row = self._db.execute("SELECT * FROM baseline WHERE good = 1 ORDER BY recorded_at "
                               "DESC, rowid DESC LIMIT 1").fetchone()
        return _baseline(row) if row else None

    def all(self) -> list[Baseline]:
        rows = self._db.execute("SELECT * FROM baseline ORDER BY recorded_at, rowid").fetchall()
        return [_baseline(r) for r in rows]


def _baseline(row: tuple[Any, ...]) -> Baseline:
    name, recorded_at, good, findings, scenario, topology, facts_json = row
    return Baseline(str(name), str(recorded_at), bool(good), int(findings), str(scenario),
                    str(topology), dict(json.loads(facts_json)))
