"""`ibdev2netdev [-v]` (MLNX_OFED / mlnx-tools).

    mlx5_0 port 1 ==> ib0 (Up)
    0000:02:00.5 mlx5_2 (MT4116 - NA)  fw 12.23.1020 port 1 (DOWN  ) ==> enp2s0f2 (Down)
    0000:b8:00.1 mlx5_13 (MT4123 - MCX653106A-ECAT) ConnectX-6 VPI adapter card, 100Gb/s (HDR100,
        EDR IB and 100GbE), dual-port QSFP56 fw 20.26.4012 port 1 (ACTIVE) ==> ib4 (Up)

The `-v` description may itself contain parentheses and the state may be padded (`(DOWN  )`);
text after the final `(Up)` is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from fabtui.model.parsed.ibdev2netdev import Ibdev2netdevEntry, Ibdev2netdevOutput
from fabtui.model.table import Table, left
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import KeptLines, Streamed, row_defaults
from fabtui.parsers.text import clean_line_stream, clean_lines, is_missing, split_lines

KIND = "ibdev2netdev"
MODEL = Ibdev2netdevOutput
DESCRIPTION = "ibdev2netdev [-v]: RDMA device port -> netdev, link state"

_TAIL = r"port\s+(?P<port>\d+)\s+(?:\((?P<pstate>[^)]*)\)\s+)?<?==>\s*(?P<netdev>\S+)" \
        r"\s*\((?P<state>[^)]*)\)"
_PLAIN = re.compile(r"^\s*(?P<dev>[A-Za-z][\w.-]*)\s+" + _TAIL)
_VERBOSE = re.compile(r"^\s*(?P<pci>[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s+"
                      r"(?P<dev>\S+)\s+\((?P<part>[^)]*)\)\s*(?P<desc>.*?)\s*"
                      r"\bfw\s+(?P<fw>\S+)\s+" + _TAIL)


def detect(text: str) -> float:
    """How sure we are that `text` is ibdev2netdev output (0..1)."""
    lines = clean_lines(text[:20000])
    hits = sum(1 for line in lines if _PLAIN.match(line) or _VERBOSE.match(line))
    return 0.0 if not hits else 0.95 if hits >= 2 else 0.8


_ENTRY = row_defaults(Ibdev2netdevEntry)


def _entry(match: re.Match[str], verbose: bool) -> dict[str, object]:
    """One line as an entry, as `model_dump(mode="json")` gives it (no model per line)."""
    netdev = match.group("netdev")
    entry = dict(_ENTRY)
    entry.update(device=match.group("dev"), port=int(match.group("port")),
                 netdev=None if is_missing(netdev) else netdev,
                 state=match.group("state").strip() or None,
                 port_state=(match.group("pstate") or "").strip() or None)
    if verbose:
        part, _, board = match.group("part").partition(" - ")
        entry.update(pci_address=match.group("pci"), part_id=part.strip() or None,
                     board_id=None if is_missing(board) or board.strip() == "NA"
                     else board.strip(),
                     description=match.group("desc").strip() or None,
                     fw_version=match.group("fw"))
    return entry


def _entries(numbered: Iterable[tuple[int, str]], kept: KeptLines | None,
             warnings: list[str] | None) -> Iterator[dict[str, object]]:
    """The entries of numbered lines; their lines kept and unread `==>` lines warned about
    when asked to."""
    for number, line in numbered:
        verbose = _VERBOSE.match(line)
        match = verbose or _PLAIN.match(line)
        if match:
            if kept is not None:
                kept.add(number, line)
            yield _entry(match, verbose is not None)
        elif "==>" in line and warnings is not None:
            warnings.append(f"line {number}: unrecognised line: {line.strip()[:80]}")


def parse(text: str) -> Ibdev2netdevOutput:
    """Parse ibdev2netdev output; raises `ParseError` when no `dev port N ==> netdev` line."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[Ibdev2netdevOutput]:
    """Parse normalised lines (`fabtui parse` reads files this way); the entries on demand,
    read again from their kept lines (a long capture costs its lines, not a model each)."""
    kept = KeptLines()
    warnings: list[str] = []
    devices: dict[str, tuple[int, dict[str, object]]] = {}  # the lowest port's entry
    for entry in _entries(enumerate(clean_line_stream(lines), start=1), kept, warnings):
        device, port = entry["device"], entry["port"]
        assert isinstance(device, str) and isinstance(port, int)
        known = devices.get(device)
        if known is None or port < known[0]:
            devices[device] = (port, entry)
    if not kept:
        raise ParseError(KIND, None, "no `<dev> port <n> ==> <netdev> (<state>)` line found")

    def dumped() -> Iterator[dict[str, object]]:
        return _entries(kept, None, None)

    def models() -> Iterator[Ibdev2netdevEntry]:
        return (Ibdev2netdevEntry.model_validate(entry) for entry in dumped())

    head = Ibdev2netdevOutput(
        devices={name: Ibdev2netdevEntry.model_validate(entry)
                 for name, (_, entry) in devices.items()}, entries=[], warnings=warnings)
    return Streamed(head, {"entries": models}, {"entries": dumped})


def tables(result: Ibdev2netdevOutput) -> list[Table]:
    """One row per line: device, port, netdev, state."""
    columns = [left("device", "DEVICE"), left("port", "PORT"), left("netdev", "NETDEV"),
               left("state", "STATE"), left("port_state", "PORT STATE")]
    return [Table.build(columns, [(e.device, e.port, e.netdev, e.state, e.port_state)
                                  for e in result.entries])]
