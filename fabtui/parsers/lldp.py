"""LLDP neighbor tables: which device and port is really cabled to each local port.

Read, in every layout the switch CLIs and lldpd print:

- SONiC `show lldp table` (tabulate columns `LocalPort RemoteDevice RemotePortID Capability
  RemotePortDescr`, cells may be empty or hold spaces, `Total entries displayed:` footer; the
  Enterprise SONiC variant draws one unbroken dash line) and `show lldp neighbors` (lldpctl
  blocks);
- Arista EOS `show lldp neighbors` (table-change header, `Port  Neighbor Device ID  Neighbor
  Port ID  TTL`, with or without the dash line, which may not line up) and `show lldp neighbors
  detail` (`Interface Et1 detected N LLDP neighbors:` blocks);
- Cisco NX-OS (and IOS) `show lldp neighbors` (capability legend, `Device ID  Local Intf
  Hold-time  Capability  Port ID`; long device ids wrap onto their own line; ids and capability
  cells may hold spaces) and `show lldp neighbors detail` (`Chassis id:` blocks);
- lldpd `lldpcli show neighbors [details|summary]` / `lldpctl` (`Interface: eth0, via: LLDP,
  RID: 1, Time: ...` blocks; TTL under Chassis in old versions, under Port in new ones; CDP
  neighbors too) and `lldpctl -f keyvalue` (`lldp.eth0.chassis.name=...`);
- Cumulus: NVUE `nv show interface lldp`, `nv show interface lldp-detail`, `nv show interface
  <if> lldp [neighbor [<id>]]` (the local port then comes from the command line), NCLU
  `net show lldp`.

The lldpd subtype word before ids (`ifname swp1`, `mac 0c:42:..`, `local 523`) is split off into
`port_id_subtype`. Capability lines of the LLDP-MED section, and the `Port ID` of EOS's link
aggregation TLV, are not the neighbor's. Launcher prefixes, mail quoting, CRLF, tabs, prompts and
command lines are tolerated. `lldpcli show interfaces|statistics|chassis` (this host's own data)
are refused.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from fabtui.model.parsed.lldp import LldpNeighbor, LldpNeighbors
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed, with_rows
from fabtui.parsers.text import clean_line_stream, clean_lines, is_missing, split_lines

KIND = "lldp-neighbors"
MODEL = LldpNeighbors
DESCRIPTION = ("LLDP neighbors: SONiC show lldp table|neighbors, EOS/NX-OS show lldp neighbors "
               "[detail], lldpcli show neighbors / lldpctl [-f keyvalue], NVUE nv show interface "
               "lldp")

_TOTAL = re.compile(r"^\s*Total\s+entries\s+displayed\s*:\s*(\d+)\s*$", re.I)
_DASHES = re.compile(r"^\s*-{3,}[\s-]*$")
_CELL = re.compile(r"\S+(?: \S+)*")
_INT = re.compile(r"^\d+$")
_SONIC_HEADER = re.compile(r"^\s*LocalPort\s+RemoteDevice\s+RemotePortID\b")
_NCLU_HEADER = re.compile(r"^\s*LocalPort\s+.*\bRemoteHost\s+RemotePort\b")
_NVUE_HEADER = re.compile(r"^\s*Interface\s+.*\bRemote Host\s+Remote Port\b")
_NVUE_NEIGHBOR_HEADER = re.compile(r"^\s*Neighbor\s+Remote IP\b.*\bRemote Port\b")
_EOS_HEADER = re.compile(r"^\s*Port\s+Neighbor Device ID\s+Neighbor Port ID\s+TTL\s*$")
_EOS_STATS = re.compile(r"^\s*(?:Last table change time|Number of table (?:inserts|deletes))\s*:")
_NXOS_HEADER = re.compile(r"^\s*Device ID\s+Local Intf\s+Hold-time\s+Capability\s+Port ID\s*$")
_EOS_DETAIL = re.compile(r"^\s*Interface\s+(\S+)\s+detected\s+(\d+)\s+LLDP\s+neighbors?:?\s*$")
_NXOS_CHASSIS = re.compile(r"^\s*Chassis id\s*:", re.I)
_NXOS_LOCAL = re.compile(r"^\s*Local Port id\s*:", re.I)
_LLDPD_IFACE = re.compile(r"^\s*Interface:\s*([^,\s]+)\s*(?:,\s*via:\s*([^,]*?)\s*(?:,|$)|"
                          r"\(via\s+([^)]*)\))?")
_LLDPD_TITLE = re.compile(r"^\s*LLDP\s+neighbors:?\s*$", re.I)
_LLDPD_OTHER = re.compile(r"^\s*(LLDP interfaces|LLDP statistics|LLDP Global statistics|"
                          r"Local chassis|Global configuration):\s*$")
_LLDPD_FIELD = re.compile(r"^\s*(?:ChassisID|SysName|PortID|PortDescr|MgmtIP):")
_KEYVALUE = re.compile(r"^\s*lldp\.(?P<iface>.+?)\.(?P<key>(?:via|rid|age|chassis|port|vlan|"
                       r"ppvid|pi|lldp-med|unknown-tlvs|ttl)(?:\.[^=]*)?)=(?P<value>.*)$")
_NV_COMMAND = re.compile(r"\bnv\s+show\s+interface\s+(?!lldp\b|lldp-detail\b)(\S+)\s+lldp\b"
                         r"(?:\s+neighbor(?:\s+(\S+))?)?")
_NV_BRIEF = re.compile(r"^\s*\[neighbor\]\s+(\S.*?)\s*$")
_NV_TREE_KEY = re.compile(r"^\s*(?:system-name|chassis-id)\s+\S")
_SONIC_COMMAND = re.compile(r"\bshow\s+lldp\s+neighbors?\b")
_PROMPT = re.compile(r"^\S*[@:]\S*[$#>](?:\s|$)|^\S+[#>]\s*$")
_ELIDED = re.compile(r"^\s*(?:\.\.\.|…)(?:\s+(?:\.\.\.|…))*\s*$")
_ID_SUBTYPES = frozenset({"mac", "ifname", "ifalias", "local", "ip", "unhandled"})
_EOS_SUBTYPES = {"interface name": "ifname", "mac address": "mac", "locally assigned": "local",
                 "interface alias": "ifalias", "network address": "ip"}
_ON = frozenset({"on", "yes", "enabled", "true"})
_CAPABILITY_CODES = re.compile(r"^[BRTCWPSO](?:,?[BRTCWPSO])*,?$")

Flavor = Literal["sonic", "eos", "nxos", "lldpd", "nvue"]


class _Neighbor(NamedTuple):
    """A neighbor as read: `LldpNeighbor`'s fields, in its order, as a tuple (a big switch's
    table has thousands of rows; a model each cost ~7x its text)."""

    local_port: str
    device: str | None
    port_id: str | None
    port_id_subtype: str | None = None
    port_description: str | None = None
    chassis_id: str | None = None
    capabilities: str | None = None
    ttl: int | None = None
    management_address: str | None = None
    protocol: str | None = None


@dataclass
class _Draft:
    """A neighbor being read; becomes an `LldpNeighbor` once its block or row ends."""

    local_port: str
    line: int
    device: str | None = None
    port_id: str | None = None
    port_id_subtype: str | None = None
    port_description: str | None = None
    chassis_id: str | None = None
    capabilities: list[str] = field(default_factory=list)
    capabilities_text: str | None = None
    ttl: int | None = None
    management_address: str | None = None
    protocol: str | None = None

    def empty(self) -> bool:
        """True when nothing but the local port was read (a block cut off by truncation)."""
        return self.device is None and self.port_id is None and self.chassis_id is None

    def build(self) -> _Neighbor:
        """The finished neighbor."""
        caps = self.capabilities_text
        if caps is None and self.capabilities:
            caps = ", ".join(self.capabilities)
        return _Neighbor(local_port=self.local_port, device=self.device, port_id=self.port_id,
                            port_id_subtype=self.port_id_subtype,
                            port_description=self.port_description, chassis_id=self.chassis_id,
                            capabilities=caps, ttl=self.ttl,
                            management_address=self.management_address, protocol=self.protocol)


@dataclass
class _Result:
    """What a layout reader found."""

    flavor: Flavor
    view: str
    neighbors: list[_Neighbor] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    total: int | None = None
    rows: _EosRows | None = None
    """The neighbors instead of `neighbors`, where a reader keeps them as their lines."""

    def all(self) -> list[_Neighbor] | _EosRows:
        """Every neighbor read."""
        return self.rows if self.rows is not None else self.neighbors


# Small value helpers ----------------------------------------------------------------------------

def _value(text: str | None) -> str | None:
    """A printed value, or None for N/A, `-`, empty and NX-OS's `not advertised`."""
    if text is None:
        return None
    text = text.strip()
    if is_missing(text) or text.lower() in ("not advertised", "(none)"):
        return None
    return text


def _unquote(text: str) -> str:
    """EOS detail quotes strings (`"Ethernet1"`); one pair of outer quotes goes."""
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1]
    return text


def _split_subtype(text: str | None) -> tuple[str | None, str | None]:
    """`ifname swp1` -> (`ifname`, `swp1`); a value without a subtype word is kept whole."""
    value = _value(text)
    if value is None:
        return None, None
    parts = value.split(None, 1)
    if len(parts) == 2 and parts[0].lower() in _ID_SUBTYPES:
        return parts[0].lower(), parts[1].strip()
    return None, value


def _first_int(text: str | None) -> int | None:
    """The first integer in `120 seconds`, `120`; None when there is none."""
    match = re.search(r"\d+", text or "")
    return int(match.group()) if match else None


def _is_on(state: str) -> bool:
    return state.strip().lower() in _ON


def _lines(text: str) -> list[str]:
    """Cleaned lines (launcher prefixes, quoting, CRLF gone), tabs expanded."""
    return [line.expandtabs(8).rstrip() for line in clean_lines(text)]


# Detection ---------------------------------------------------------------------------------------

_STRONG: tuple[tuple[re.Pattern[str], float], ...] = (
    (_SONIC_HEADER, 0.95), (_EOS_HEADER, 0.95), (_EOS_DETAIL, 0.95), (_NXOS_HEADER, 0.9),
    (_LLDPD_TITLE, 0.9), (_NVUE_HEADER, 0.85), (_NCLU_HEADER, 0.85),
    (_NVUE_NEIGHBOR_HEADER, 0.8),
)


def detect(text: str) -> float:
    """How sure we are that `text` is an LLDP neighbor listing (0..1)."""
    try:
        lines = _lines(text[:50000])
    except Exception:
        return 0.0
    best = 0.0
    keyvalue = 0
    for line in lines:
        for pattern, score in _STRONG:
            if score > best and pattern.match(line):
                best = score
        if _KEYVALUE.match(line):
            keyvalue += 1
        elif best < 0.9 and _LLDPD_IFACE.match(line) and re.search(r",\s*via:|\(via ", line):
            best = 0.9
    if keyvalue >= 2:
        best = max(best, 0.95)
    elif keyvalue == 1:
        best = max(best, 0.6)
    head = "\n".join(lines)
    if best < 0.85 and re.search(r"(?m)^\s*Local Port id\s*:", head) and \
            re.search(r"(?mi)^\s*Chassis id\s*:", head):
        best = 0.9
    if best < 0.8 and re.search(r"(?m)^\s*Interface:\s*\S", head) and \
            sum(1 for line in lines if _LLDPD_FIELD.match(line)) >= 2:
        best = 0.85
    if best < 0.7 and sum(1 for line in lines if _EOS_STATS.match(line)) >= 2:
        best = 0.7
    if best < 0.7 and _NV_COMMAND.search(head) and \
            any(_NV_BRIEF.match(line) or _NV_TREE_KEY.match(line) for line in lines):
        best = 0.7
    if best < 0.4 and any(_LLDPD_OTHER.match(line) for line in lines):
        best = 0.4
    return best


# Dispatch ----------------------------------------------------------------------------------------

def parse(text: str) -> LldpNeighbors:
    """Parse any supported LLDP neighbor listing; raises `ParseError` when there is none."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(normalised: Iterable[str]) -> Streamed[LldpNeighbors]:
    """Parse normalised lines (`fabtui parse` reads files this way, never holding the text);
    the neighbors are written from their tuples, never a model each."""
    lines = [line.expandtabs(8).rstrip() for line in clean_line_stream(normalised)]
    if not any(line.strip() for line in lines):
        raise ParseError(KIND, None, "the input is empty")
    reader = _choose(lines)
    result = reader(lines)
    neighbors = result.all()
    if result.total is not None and result.total != len(neighbors):
        result.warnings.append(f"footer says {result.total} entries but {len(neighbors)} "
                               "neighbors were read")
    head = LldpNeighbors(flavor=result.flavor, view=result.view, neighbors=[],
                         total_entries=result.total, warnings=result.warnings)
    return with_rows(head, "neighbors", LldpNeighbor,
                     lambda: (neighbor._asdict() for neighbor in neighbors))


def _first(lines: list[str], pattern: re.Pattern[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if pattern.match(line)), None)


def _choose(lines: list[str]) -> Callable[[list[str]], _Result]:
    """The reader for the layout the lines are in, or `ParseError`."""
    if sum(1 for line in lines if _KEYVALUE.match(line)) >= 1:
        return _parse_keyvalue
    if _first(lines, _EOS_DETAIL) is not None:
        return _parse_eos_detail
    if _first(lines, _NXOS_LOCAL) is not None and _first(lines, _NXOS_CHASSIS) is not None:
        return _parse_nxos_detail
    other = _first(lines, _LLDPD_OTHER)
    if other is not None and _first(lines, _LLDPD_TITLE) is None:
        raise ParseError(KIND, other + 1, f"this is lldpcli `{lines[other].strip()}` output "
                                          "(this host's own data), not its neighbors")
    if _first(lines, _LLDPD_TITLE) is not None or \
            (_first(lines, _LLDPD_IFACE) is not None and
             any(_LLDPD_FIELD.match(line) for line in lines)):
        return _parse_blocks
    tables: list[tuple[int, Callable[[list[str]], _Result]]] = []
    for pattern, reader in ((_SONIC_HEADER, _parse_sonic_table), (_EOS_HEADER, _parse_eos_table),
                            (_NXOS_HEADER, _parse_nxos_table), (_NVUE_HEADER, _parse_nvue_table),
                            (_NCLU_HEADER, _parse_nclu_table),
                            (_NVUE_NEIGHBOR_HEADER, _parse_nvue_neighbor_table)):
        index = _first(lines, pattern)
        if index is not None:
            tables.append((index, reader))
    if tables:
        return min(tables, key=lambda item: item[0])[1]
    if any(_NV_BRIEF.match(line) or _NV_TREE_KEY.match(line) for line in lines) and \
            any(_NV_COMMAND.search(line) for line in lines):
        return _parse_nvue_interface
    raise ParseError(KIND, None, "no LLDP neighbor table or neighbor block found")


# Column tables (SONiC, NVUE, NCLU) ---------------------------------------------------------------

@dataclass
class _Columns:
    """Where each column of a table starts, and which neighbor field it fills."""

    starts: list[int]
    fields: list[str | None]

    def cells(self, line: str) -> list[str]:
        """The row's cells: sliced at the column starts, else split on wide gaps."""
        if self._slices_cleanly(line):
            bounds = [*self.starts[1:], max(len(line), self.starts[-1]) + 1]
            return [line[start:end].strip() for start, end in zip(self.starts, bounds, strict=True)]
        cells = [""] * len(self.starts)
        for match in re.finditer(r"\S+(?: \S+)*", line):
            column = min(range(len(self.starts)),
                         key=lambda i: abs(self.starts[i] - match.start()))
            cells[column] = f"{cells[column]}  {match.group()}".strip()
        return cells

    def _slices_cleanly(self, line: str) -> bool:
        """False when a column start falls inside a word (a misaligned row)."""
        for start in self.starts[1:]:
            if 0 < start < len(line) and line[start - 1] != " " and line[start] != " ":
                return False
        return True


def _columns(header: str, underline: str | None, names: dict[str, str]) -> _Columns:
    """Column starts from the dash segments under the header when they match its labels, else
    from the labels (tabulate right-aligns numeric columns, so the dashes are the better guide)."""
    labels = [(m.start(), m.group()) for m in _CELL.finditer(header)]
    starts = [start for start, _ in labels]
    if underline is not None:
        segments = [m.start() for m in re.finditer(r"-+", underline)]
        if len(segments) == len(labels):
            starts = segments
    fields = [names.get(label.lower()) for _, label in labels]
    return _Columns(starts, fields)


def _table_rows(lines: list[str], header: int) -> Iterator[tuple[int, str | None, str]]:
    """(line number, kind, text) after a header: kind `underline`, `row`, `end` (footer dashes,
    a total, a prompt) or `elided`."""
    seen_row = False
    for index in range(header + 1, len(lines)):
        line = lines[index]
        if not line.strip():
            continue
        if _TOTAL.match(line):
            yield index + 1, "total", line
            return
        if _DASHES.match(line):
            if not seen_row and index == _next_nonblank(lines, header):
                yield index + 1, "underline", line
                continue
            yield index + 1, "end", line
            continue
        if _ELIDED.match(line):
            yield index + 1, "elided", line
            continue
        if _PROMPT.match(line):
            return
        seen_row = True
        yield index + 1, "row", line


def _next_nonblank(lines: list[str], index: int) -> int:
    for i in range(index + 1, len(lines)):
        if lines[i].strip():
            return i
    return len(lines)


def _read_column_table(lines: list[str], header: int, names: dict[str, str],
                       fixed: dict[str, str] | None = None) -> tuple[list[_Draft], list[str],
                                                                     int | None, bool]:
    """Rows of a column table as drafts, warnings, the printed total, and whether the table
    reached its footer."""
    drafts: list[_Draft] = []
    warnings: list[str] = []
    total = None
    footer = False
    underline = None
    columns = None
    ended = False
    for number, kind, line in _table_rows(lines, header):
        if kind == "underline":
            underline = line
            continue
        if kind == "total":
            total = int(_TOTAL.match(line).group(1))  # type: ignore[union-attr]
            footer = True
            break
        if kind == "end":
            footer = ended = True
            continue
        if kind == "elided":
            warnings.append(f"line {number}: rows elided (`...`)")
            continue
        if ended:
            break
        if columns is None:
            columns = _columns(lines[header], underline, names)
        draft = _row_draft(columns, line, number, fixed or {})
        if draft is None:
            warnings.append(f"line {number}: unrecognised row skipped: {line.strip()[:80]}")
        elif draft is not _NO_NEIGHBOR:
            drafts.append(draft)
    return drafts, warnings, total, footer


_NO_NEIGHBOR = _Draft(local_port="", line=0)


def _row_draft(columns: _Columns, line: str, number: int, fixed: dict[str, str]) -> _Draft | None:
    """A draft from one row; None when it has no local port; `_NO_NEIGHBOR` for a port row
    without any neighbor (NVUE lists those)."""
    values: dict[str, str | None] = dict(fixed)
    for name, cell in zip(columns.fields, columns.cells(line), strict=True):
        if name is not None:
            values[name] = _value(cell)
    local = values.get("local_port")
    if not local:
        return None
    if values.get("device") is None and values.get("port_id") is None:
        return _NO_NEIGHBOR
    return _Draft(local_port=local, line=number, device=values.get("device"),
                  port_id=values.get("port_id"), port_description=values.get("port_description"),
                  capabilities_text=values.get("capabilities"),
                  management_address=values.get("management_address"),
                  ttl=_first_int(values.get("ttl")))


def _header_index(lines: list[str], pattern: re.Pattern[str]) -> int:
    index = _first(lines, pattern)
    assert index is not None  # _choose picked this reader because the header is there
    return index


def _parse_sonic_table(lines: list[str]) -> _Result:
    """SONiC `show lldp table` (and Enterprise SONiC's variant)."""
    header = _header_index(lines, _SONIC_HEADER)
    names = {"localport": "local_port", "remotedevice": "device", "remoteportid": "port_id",
             "capability": "capabilities", "remoteportdescr": "port_description"}
    drafts, warnings, total, footer = _read_column_table(lines, header, names)
    if not drafts and not footer:
        raise ParseError(KIND, header + 1, "`show lldp table` header without rows or the "
                                           "`Total entries displayed` footer (truncated?)")
    if not footer:
        warnings.append("no `Total entries displayed` footer (truncated?)")
    return _Result("sonic", "table", [d.build() for d in drafts], warnings, total)


def _parse_nvue_table(lines: list[str]) -> _Result:
    """NVUE `nv show interface lldp`: Interface, Speed, Type, Remote Host, Remote Port."""
    header = _header_index(lines, _NVUE_HEADER)
    names = {"interface": "local_port", "remote host": "device", "remote port": "port_id"}
    drafts, warnings, total, _ = _read_column_table(lines, header, names)
    return _Result("nvue", "table", [d.build() for d in drafts], warnings, total)


def _parse_nclu_table(lines: list[str]) -> _Result:
    """Cumulus NCLU `net show lldp`: LocalPort, Speed, Mode, RemoteHost, RemotePort."""
    header = _header_index(lines, _NCLU_HEADER)
    names = {"localport": "local_port", "remotehost": "device", "remoteport": "port_id"}
    drafts, warnings, total, _ = _read_column_table(lines, header, names)
    return _Result("nvue", "table", [d.build() for d in drafts], warnings, total)


def _nv_command(lines: list[str], what: str) -> tuple[str, str | None]:
    """(local port, neighbor id) from the `nv show interface X lldp ...` command line."""
    for line in lines:
        match = _NV_COMMAND.search(line)
        if match:
            return match.group(1), match.group(2)
    raise ParseError(KIND, None, f"{what} does not print the local port; include the "
                                 "`nv show interface <port> lldp ...` command line")


def _parse_nvue_neighbor_table(lines: list[str]) -> _Result:
    """NVUE `nv show interface X lldp neighbor`: Neighbor, Remote IP, Model, SW Version, Remote
    Port; the local port is only on the command line."""
    header = _header_index(lines, _NVUE_NEIGHBOR_HEADER)
    local, _ = _nv_command(lines, "`nv show interface <port> lldp neighbor`")
    names = {"neighbor": "device", "remote ip": "management_address", "remote port": "port_id"}
    drafts, warnings, total, _ = _read_column_table(lines, header, names, {"local_port": local})
    return _Result("nvue", "table", [d.build() for d in drafts], warnings, total)


# NVUE per-interface views ------------------------------------------------------------------------

_NV_TREE_FIELDS = {("chassis", "system-name"): "device", ("chassis", "chassis-id"): "chassis_id",
                   ("chassis", "management-address-ipv4"): "management_address",
                   ("port", "name"): "port_id", ("port", "description"): "port_description",
                   ("port", "type"): "port_id_subtype", ("port", "ttl"): "ttl"}


def _parse_nvue_interface(lines: list[str]) -> _Result:
    """`nv show interface X lldp` (`[neighbor] name` rows) and `nv show interface X lldp neighbor
    NAME` (an indented key/value tree)."""
    local, neighbor_id = _nv_command(lines, "`nv show interface <port> lldp`")
    brief = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _NV_BRIEF.match(line))]
    if brief:
        neighbors = [_Neighbor(local_port=local, device=_value(name), port_id=None)
                     for _, name in brief]
        return _Result("nvue", "table", neighbors)
    values: dict[str, str | None] = {}
    parent = ""
    for line in lines:
        match = re.match(r"^( *)(\S+)(?:\s+(\S.*?))?\s*$", line)
        if match is None or _DASHES.match(line):
            continue
        indent, key, value = len(match.group(1)), match.group(2), match.group(3)
        if indent == 0:
            parent = key
            continue
        name = _NV_TREE_FIELDS.get((parent, key))
        if name is not None and indent == 2 and name not in values:
            values[name] = _value(value)
    draft = _Draft(local_port=local, line=1, device=values.get("device") or neighbor_id,
                   chassis_id=values.get("chassis_id"), port_id=values.get("port_id"),
                   port_id_subtype=values.get("port_id_subtype"),
                   port_description=values.get("port_description"),
                   management_address=values.get("management_address"),
                   ttl=_first_int(values.get("ttl")))
    return _Result("nvue", "detail", [draft.build()])


# EOS table ---------------------------------------------------------------------------------------

def _parse_eos_table(lines: list[str]) -> _Result:
    """EOS `show lldp neighbors`: port, device id, port id (either may hold spaces), TTL."""
    header = _header_index(lines, _EOS_HEADER)
    candidates = [lines[header].find("Neighbor Port ID")]
    warnings: list[str] = []
    neighbors = _EosRows(candidates)
    for number, kind, line in _table_rows(lines, header):
        if kind == "underline":
            segments = [m.start() for m in re.finditer(r"-+", line)]
            if len(segments) == 4:
                candidates.append(segments[2])
            continue
        if kind == "elided":
            warnings.append(f"line {number}: rows elided (`...`)")
            continue
        if kind != "row":
            continue
        if _eos_row(line, candidates) is None:
            warnings.append(f"line {number}: unrecognised row skipped: {line.strip()[:80]}")
        else:
            neighbors.add(line)
    return _Result("eos", "table", [], warnings, rows=neighbors)


class _EosRows:
    """The rows of an EOS table, kept as their lines and read again when iterated: a row's
    line is already held, a neighbor tuple with its cut strings cost ~5x it again."""

    def __init__(self, candidates: list[int]) -> None:
        self.candidates = candidates  # grows as dash lines are read: each row keeps its count
        self.lines: list[str] = []
        self.known = array("H")

    def add(self, line: str) -> None:
        """Keep a row read with the port id starts known so far."""
        self.lines.append(line)
        self.known.append(len(self.candidates))

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[_Neighbor]:
        for line, known in zip(self.lines, self.known, strict=True):
            neighbor = _eos_row(line, self.candidates[:known])
            assert neighbor is not None  # it was read from this very line
            yield neighbor


def _tokens(line: str) -> list[re.Match[str]]:
    return list(re.finditer(r"\S+", line))


def _eos_row(line: str, port_id_starts: list[int]) -> _Neighbor | None:
    """One EOS row; the split between device id and port id is the token nearest to where the
    header (or its dashes) puts the port id column, when either holds spaces."""
    tokens = _tokens(line)
    if len(tokens) < 4 or not _INT.match(tokens[-1].group()):
        return None
    middle = tokens[1:-1]
    split = 1
    if len(middle) > 2:
        split = min(range(1, len(middle)),
                    key=lambda i: min(abs(middle[i].start() - c) for c in port_id_starts))
    device = line[middle[0].start():middle[split - 1].end()]
    port_id = line[middle[split].start():middle[-1].end()]
    return _Neighbor(local_port=tokens[0].group(), device=_value(device),
                        port_id=_value(port_id), ttl=int(tokens[-1].group()))


# NX-OS table -------------------------------------------------------------------------------------

@dataclass
class _NxosLayout:
    """Header positions of the NX-OS table."""

    hold: int
    port: int


def _parse_nxos_table(lines: list[str]) -> _Result:
    """NX-OS / IOS `show lldp neighbors`, with device ids wrapped onto their own line."""
    header = _header_index(lines, _NXOS_HEADER)
    layout = _NxosLayout(lines[header].find("Hold-time"), lines[header].find("Port ID"))
    neighbors: list[_Neighbor] = []
    warnings: list[str] = []
    total = None
    pending: str | None = None
    for number, kind, line in _table_rows(lines, header):
        if kind == "total":
            total = int(_TOTAL.match(line).group(1))  # type: ignore[union-attr]
            break
        if kind == "elided":
            warnings.append(f"line {number}: rows elided (`...`)")
        if kind != "row":
            continue
        draft = _nxos_row(line, number, layout)
        if draft is None:
            if pending is not None:
                warnings.append(f"line {number - 1}: device id without a row: {pending[:80]}")
            pending = line.strip()
            continue
        if draft.device is None:
            draft.device, pending = pending, None
        elif pending is not None:
            warnings.append(f"line {number - 1}: device id without a row: {pending[:80]}")
            pending = None
        neighbors.append(draft.build())
    if pending is not None:
        warnings.append(f"device id `{pending[:80]}` at the end has no row (truncated?)")
    if not neighbors and total is None:
        raise ParseError(KIND, header + 1, "`show lldp neighbors` header without rows or the "
                                           "`Total entries displayed` footer (truncated?)")
    if total is None:
        warnings.append("no `Total entries displayed` footer (truncated?)")
    return _Result("nxos", "table", neighbors, warnings, total)


def _nxos_row(line: str, number: int, layout: _NxosLayout) -> _Draft | None:
    """One row (or the second half of a wrapped one: no device id before the local port)."""
    tokens = _tokens(line)
    holds = [i for i in range(1, len(tokens)) if _INT.match(tokens[i].group())
             and i + 1 < len(tokens)]
    if not holds:
        return None
    hold = min(holds, key=lambda i: abs(tokens[i].start() - layout.hold))
    offset = tokens[hold].start() - layout.hold
    rest = tokens[hold + 1:]
    caps: list[re.Match[str]] = []
    for token in rest[:-1] if layout.port < 0 else rest:
        near_port = layout.port >= 0 and token.start() >= layout.port + offset - 1
        if near_port or not _CAPABILITY_CODES.match(token.group()):
            break
        caps.append(token)
    port_tokens = rest[len(caps):]
    device = line[tokens[0].start():tokens[hold - 2].end()] if hold >= 2 else None
    port_id = line[port_tokens[0].start():port_tokens[-1].end()] if port_tokens else None
    capabilities = line[caps[0].start():caps[-1].end()] if caps else None
    return _Draft(local_port=tokens[hold - 1].group(), line=number, device=_value(device),
                  port_id=_value(port_id), capabilities_text=capabilities,
                  ttl=int(tokens[hold].group()))


# lldpctl-style blocks (lldpd, SONiC show lldp neighbors, NVUE lldp-detail) -----------------------

_BLOCK_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 /-]*?)\s*:\s*(.*?)\s*$")
_NEIGHBOR_SECTIONS = (None, "chassis", "port")


def _parse_blocks(lines: list[str]) -> _Result:
    """`Interface: X, via: LLDP, ...` blocks, one per neighbor."""
    result = _Result("lldpd", "detail")
    draft: _Draft | None = None
    section: str | None = None
    for number, line in enumerate(lines, start=1):
        match = _LLDPD_IFACE.match(line)
        if match:
            _finish_block(draft, result)
            draft = _Draft(local_port=match.group(1), line=number,
                           protocol=_value(match.group(2) or match.group(3)))
            section = None
            continue
        if draft is None:
            continue
        key_match = _BLOCK_KEY.match(line)
        if key_match is None:
            continue
        key, value = key_match.group(1).lower(), key_match.group(2)
        if not _block_field(draft, key, value, section) and \
                (value == "" or key in ("vlan", "ppvid", "pi", "lldp-med")):
            section = key
    _finish_block(draft, result)
    result.flavor = _block_flavor(lines, result.neighbors)
    return result


def _block_field(draft: _Draft, key: str, value: str, section: str | None) -> bool:
    """Store one `Key: value` line of a neighbor block; False when it is not a neighbor field."""
    if section not in _NEIGHBOR_SECTIONS:
        return False
    if key == "chassisid":
        draft.chassis_id = _split_subtype(value)[1]
    elif key == "sysname":
        draft.device = _value(value)
    elif key == "mgmtip":
        draft.management_address = draft.management_address or _value(value)
    elif key == "capability" and section in (None, "chassis"):
        name, _, state = value.rpartition(",")
        if name and _is_on(state):
            draft.capabilities.append(name.strip())
    elif key == "syscapenabled":
        draft.capabilities_text = _value(value)
    elif key == "ttl":
        draft.ttl = _first_int(value) if draft.ttl is None else draft.ttl
    elif key == "portid":
        draft.port_id_subtype, draft.port_id = _split_subtype(value)
    elif key == "portdescr":
        draft.port_description = _value(value)
    else:
        return False
    return True


def _finish_block(draft: _Draft | None, result: _Result) -> None:
    if draft is None:
        return
    if draft.empty():
        result.warnings.append(f"line {draft.line}: neighbor block of {draft.local_port} has no "
                               "chassis or port lines (truncated?); skipped")
        return
    result.neighbors.append(draft.build())


def _block_flavor(lines: list[str], neighbors: list[_Neighbor]) -> Flavor:
    """SONiC prints lldpctl blocks for `show lldp neighbors`; NVUE's lldp-detail drops `via:` and
    puts a dash line under each `Interface:` line."""
    head = "\n".join(lines[:40])
    if re.search(r"\bnv\s+show\b", head) or any(
            _LLDPD_IFACE.match(line) and "via" not in line and i + 1 < len(lines)
            and _DASHES.match(lines[i + 1]) for i, line in enumerate(lines)):
        return "nvue"
    if _SONIC_COMMAND.search(head) or any(re.match(r"^Ethernet\d+$", n.local_port)
                                          for n in neighbors):
        return "sonic"
    return "lldpd"


# lldpctl -f keyvalue -----------------------------------------------------------------------------

def _parse_keyvalue(lines: list[str]) -> _Result:
    """`lldp.<if>.<path>=<value>` lines; a new `via` (or a second `rid`) starts a new neighbor of
    the same interface."""
    drafts: list[_Draft] = []
    current: dict[str, _Draft] = {}
    seen: dict[int, set[str]] = {}
    for number, line in enumerate(lines, start=1):
        match = _KEYVALUE.match(line)
        if match is None:
            continue
        iface, key, value = match.group("iface"), match.group("key"), match.group("value")
        draft = current.get(iface)
        if draft is None or (key in ("via", "rid") and key in seen[id(draft)]):
            draft = _Draft(local_port=iface, line=number)
            drafts.append(draft)
            current[iface] = draft
            seen[id(draft)] = set()
        seen[id(draft)].add(key)
        _keyvalue_field(draft, key, value)
    result = _Result("lldpd", "keyvalue")
    for draft in drafts:
        _finish_block(draft, result)
    return result


def _keyvalue_field(draft: _Draft, key: str, value: str) -> None:
    parts = key.split(".")
    if key == "via":
        draft.protocol = _value(value)
    elif parts[0] == "chassis" and len(parts) == 2 and parts[1] in _ID_SUBTYPES:
        draft.chassis_id = draft.chassis_id or _value(value)
    elif key == "chassis.name":
        draft.device = _value(value)
    elif key == "chassis.mgmt-ip":
        draft.management_address = draft.management_address or _value(value)
    elif key in ("chassis.ttl", "port.ttl", "ttl.ttl", "ttl"):
        draft.ttl = _first_int(value) if draft.ttl is None else draft.ttl
    elif parts[0] == "chassis" and len(parts) == 3 and parts[2] == "enabled":
        if _is_on(value):
            draft.capabilities.append(parts[1])
    elif parts[0] == "port" and len(parts) == 2 and parts[1] in _ID_SUBTYPES:
        draft.port_id_subtype, draft.port_id = parts[1], _value(value)
    elif key == "port.descr":
        draft.port_description = _value(value)


# EOS detail --------------------------------------------------------------------------------------

_EOS_ITEM = re.compile(r"^\s*-\s+([^:]+?)\s*(?::\s*(.*?))?\s*$")
_EOS_SUB = re.compile(r"^\s*([A-Za-z][^:]*?)\s*:\s*(.*?)\s*$")
_EOS_NEIGHBOR = re.compile(r"^\s*Neighbor\s+\S+.*,\s*age\b")


def _parse_eos_detail(lines: list[str]) -> _Result:
    """`show lldp neighbors detail` on EOS: `Interface X detected N LLDP neighbors:`, then one
    `Neighbor chassis/port, age N seconds` block per neighbor with `- Item: value` lines."""
    result = _Result("eos", "detail")
    interface: str | None = None
    draft: _Draft | None = None
    item = ""
    announced = 0
    for number, line in enumerate(lines, start=1):
        match = _EOS_DETAIL.match(line)
        if match:
            _finish_block(draft, result)
            draft, interface, item = None, match.group(1), ""
            announced += int(match.group(2))
            continue
        if interface is not None and _EOS_NEIGHBOR.match(line):
            _finish_block(draft, result)
            draft, item = _Draft(local_port=interface, line=number), ""
            continue
        if draft is None:
            continue
        item_match = _EOS_ITEM.match(line)
        if item_match:
            item = item_match.group(1).lower()
            _eos_item(draft, item, item_match.group(2) or "")
            continue
        sub = _EOS_SUB.match(line)
        if sub:
            _eos_sub(draft, item, sub.group(1).lower(), sub.group(2))
    _finish_block(draft, result)
    if announced != len(result.neighbors):
        result.warnings.append(f"the interfaces announce {announced} neighbors but "
                               f"{len(result.neighbors)} were read")
    return result


def _eos_item(draft: _Draft, item: str, value: str) -> None:
    """A `- Item: value` line."""
    if item == "port id type":
        words = re.sub(r"\s*\(\d+\)\s*$", "", value).strip()
        draft.port_id_subtype = _EOS_SUBTYPES.get(words.lower(), _value(words))
    elif item == "time to live":
        draft.ttl = _first_int(value)
    elif item == "port description":
        draft.port_description = _value(_unquote(value))
    elif item == "system name":
        draft.device = _value(_unquote(value))


def _eos_sub(draft: _Draft, item: str, key: str, value: str) -> None:
    """An indented `Key : value` line under the current `- Item`."""
    if item == "chassis id type" and key == "chassis id":
        draft.chassis_id = _value(_unquote(value))
    elif item == "port id type" and key == "port id":
        draft.port_id = _value(_unquote(value))
    elif item == "system capabilities" and key == "enabled capabilities":
        draft.capabilities_text = _value(value)
    elif item.startswith("management address") and key == "management address":
        draft.management_address = draft.management_address or _value(value)


# NX-OS detail ------------------------------------------------------------------------------------

_NXOS_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ]*?)\s*:\s*(.*?)\s*$")


def _parse_nxos_detail(lines: list[str]) -> _Result:
    """NX-OS `show lldp neighbors detail`: blocks starting at `Chassis id:`."""
    result = _Result("nxos", "detail")
    blocks: list[tuple[int, dict[str, str]]] = []
    for number, line in enumerate(lines, start=1):
        total = _TOTAL.match(line)
        if total:
            result.total = int(total.group(1))
            continue
        match = _NXOS_KEY.match(line)
        if match is None:
            continue
        key, value = match.group(1).lower(), match.group(2)
        if key == "chassis id":
            blocks.append((number, {}))
        if blocks and key not in blocks[-1][1]:
            blocks[-1][1][key] = value
    for number, fields in blocks:
        local = _value(fields.get("local port id"))
        if local is None:
            result.warnings.append(f"line {number}: neighbor without `Local Port id` skipped")
            continue
        management = _value(fields.get("management address")) or \
            _value(fields.get("management address ipv6"))
        result.neighbors.append(_Neighbor(
            local_port=local, device=_value(fields.get("system name")),
            port_id=_value(fields.get("port id")),
            port_description=_value(fields.get("port description")),
            chassis_id=_value(fields.get("chassis id")),
            capabilities=_value(fields.get("enabled capabilities")),
            management_address=management))
    return result


# Table for `fabtui parse --table` ----------------------------------------------------------------

def tables(result: LldpNeighbors) -> list[Table]:
    """One row per neighbor: local port, device, port id, description, capabilities, TTL."""
    columns = [left("local_port", "LOCAL PORT"), left("device", "DEVICE"),
               left("port_id", "PORT ID"), left("port_description", "PORT DESCR"),
               left("capabilities", "CAP"), right("ttl", "TTL")]
    rows = [(n.local_port, n.device, n.port_id, n.port_description, n.capabilities, n.ttl)
            for n in result.neighbors]
    footer = f"{len(result.neighbors)} neighbors ({result.flavor} {result.view})"
    return [Table.build(columns, rows, notes=[footer])]
