"""`scontrol show topology [NODE]` and `topology.conf` (Slurm topology/tree plugin).

::

    SwitchName=rails-g00 Level=0 LinkSpeed=1 Nodes=node[001-008]
    SwitchName=spines Level=1 LinkSpeed=1 Nodes=node[001-008] Switches=rails-g00

`topology.conf` has the same `Key=Value` fields without `Level=` (`SwitchName=s0
Nodes=tux[0-3] LinkSpeed=100`), `#` comments, and lines continued with a trailing `\\`. Keys
are case-insensitive in the file (topology.conf(5)); unknown keys are noted in the warnings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from fabtui.model.parsed.slurm_topology import SlurmSwitch, SlurmTopologyOutput
from fabtui.model.table import Table, left
from fabtui.parsers._slurm_common import HostBudget, hosts
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed
from fabtui.parsers.text import clean_line_stream, split_lines

KIND = "slurm-topology"
MODEL = SlurmTopologyOutput
DESCRIPTION = "scontrol show topology / topology.conf: Slurm's tree of switches and nodes"

_SWITCH = re.compile(r"^\s*SwitchName\s*=", re.IGNORECASE)
_FIELD = re.compile(r"(?<!\S)([A-Za-z]+)\s*=\s*(\S*)")
_KEYS = {"switchname": "name", "level": "level", "linkspeed": "link_speed", "nodes": "nodes",
         "switches": "switches"}


def detect(text: str) -> float:
    """How sure we are that `text` is a Slurm tree topology (0..1)."""
    head = text[:65536]
    if not re.search(r"(?im)^\s*SwitchName\s*=", head):
        return 0.0
    if re.search(r"(?im)^\s*SwitchName\s*=\S+.*\b(?:Nodes|Switches)\s*=", head):
        return 0.95
    return 0.5


def _logical(numbered: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Lines with comments dropped and `\\` continuations joined, numbered by their first."""
    start, parts = 0, list[str]()
    for number, raw in numbered:
        line = raw.split("#", 1)[0].rstrip()
        if not parts:
            start = number
        if line.endswith("\\"):
            parts.append(line[:-1])
            continue
        parts.append(line)
        joined = " ".join(parts).strip()
        parts = []
        if joined:
            yield start, joined
    if parts and " ".join(parts).strip():
        yield start, " ".join(parts).strip()


def _switch(number: int, line: str, warnings: list[str], budget: HostBudget) -> SlurmSwitch:
    values: dict[str, str] = {}
    for key, value in _FIELD.findall(line):
        name = _KEYS.get(key.lower())
        if name is None:
            warnings.append(f"line {number}: unknown key {key}= ignored")
            continue
        values[name] = value
    if not values.get("name"):
        raise ParseError(KIND, number, "SwitchName= has no value")
    nodes, node_names = hosts(values.get("nodes"), warnings, f"line {number}", budget)
    switches, switch_names = hosts(values.get("switches"), warnings, f"line {number}", budget)
    numbers: dict[str, int | None] = {}
    for key in ("level", "link_speed"):
        text = values.get(key)
        if text is not None and not text.isdigit():
            warnings.append(f"line {number}: {key} {text!r} is not a number")
        numbers[key] = int(text) if text is not None and text.isdigit() else None
    if nodes is None and switches is None:
        warnings.append(f"line {number}: switch {values['name']} has neither Nodes= nor "
                        "Switches=")
    return SlurmSwitch(name=values["name"], level=numbers["level"],
                       link_speed=numbers["link_speed"], nodes=nodes, switches=switches,
                       node_names=node_names, switch_names=switch_names, line=number)


def parse(text: str) -> SlurmTopologyOutput:
    """Parse the output or file; raises `ParseError` when no `SwitchName=` line is found."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[SlurmTopologyOutput]:
    """Parse normalised lines (`fabtui parse` reads files this way)."""
    warnings: list[str] = []
    budget = HostBudget()
    switches: list[SlurmSwitch] = []
    for number, line in _logical(enumerate(clean_line_stream(lines), start=1)):
        if _SWITCH.match(line):
            switches.append(_switch(number, line, warnings, budget))
        elif re.match(r"^(?:slurm_load_topo error|scontrol: error)", line):
            raise ParseError(KIND, number, line.strip())
        else:
            warnings.append(f"line {number}: unrecognised line: {line.strip()[:80]}")
    if not switches:
        raise ParseError(KIND, None, "no `SwitchName=` line found")
    scontrol = any(s.level is not None for s in switches)
    return Streamed(SlurmTopologyOutput(source="scontrol" if scontrol else "topology.conf",
                                        switches=switches, warnings=warnings))


def tables(result: SlurmTopologyOutput) -> list[Table]:
    """One row per switch: name, level, nodes, child switches."""
    columns = [left("name", "SWITCH"), left("level", "LEVEL"), left("nodes", "NODES"),
               left("switches", "SWITCHES")]
    return [Table.build(columns, [(s.name, s.level, s.nodes, s.switches)
                                  for s in result.switches])]
