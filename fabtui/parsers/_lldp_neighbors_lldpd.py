"""lldpd (`lldpcli show neighbors [details|summary]`, `lldpctl [-f keyvalue]`) for the
lldp-neighbors parser. Not a parser.

- `Interface: eth0, via: LLDP, RID: 1, Time: ...` blocks, one per neighbor (TTL under Chassis in
  old versions, under Port in new ones; CDP neighbors too; LLDP-MED capability lines are not the
  neighbor's). SONiC's `show lldp neighbors` and NVUE's `nv show interface lldp-detail` print
  these blocks too; the flavor says which printed them.
- `lldpctl -f keyvalue`: `lldp.eth0.chassis.name=...` lines.

The subtype word before ids (`ifname swp1`, `mac 0c:42:..`, `local 523`) is split off into
`port_id_subtype`.
"""

from __future__ import annotations

import re

from fabtui.parsers._lldp_neighbors_common import (
    DASHES,
    Draft,
    Flavor,
    Neighbor,
    Result,
    finish_block,
    first_int,
    value_of,
)

LLDPD_IFACE = re.compile(r"^\s*Interface:\s*([^,\s]+)\s*(?:,\s*via:\s*([^,]*?)\s*(?:,|$)|"
                         r"\(via\s+([^)]*)\))?")
LLDPD_TITLE = re.compile(r"^\s*LLDP\s+neighbors:?\s*$", re.I)
LLDPD_OTHER = re.compile(r"^\s*(LLDP interfaces|LLDP statistics|LLDP Global statistics|"
                         r"Local chassis|Global configuration):\s*$")
LLDPD_FIELD = re.compile(r"^\s*(?:ChassisID|SysName|PortID|PortDescr|MgmtIP):")
KEYVALUE = re.compile(r"^\s*lldp\.(?P<iface>.+?)\.(?P<key>(?:via|rid|age|chassis|port|vlan|"
                      r"ppvid|pi|lldp-med|unknown-tlvs|ttl)(?:\.[^=]*)?)=(?P<value>.*)$")
_SONIC_COMMAND = re.compile(r"\bshow\s+lldp\s+neighbors?\b")
_ID_SUBTYPES = frozenset({"mac", "ifname", "ifalias", "local", "ip", "unhandled"})
_ON = frozenset({"on", "yes", "enabled", "true"})
_BLOCK_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 /-]*?)\s*:\s*(.*?)\s*$")
_NEIGHBOR_SECTIONS = (None, "chassis", "port")


def _split_subtype(text: str | None) -> tuple[str | None, str | None]:
    """`ifname swp1` -> (`ifname`, `swp1`); a value without a subtype word is kept whole."""
    value = value_of(text)
    if value is None:
        return None, None
    parts = value.split(None, 1)
    if len(parts) == 2 and parts[0].lower() in _ID_SUBTYPES:
        return parts[0].lower(), parts[1].strip()
    return None, value


def _is_on(state: str) -> bool:
    return state.strip().lower() in _ON


def parse_blocks(lines: list[str]) -> Result:
    """`Interface: X, via: LLDP, ...` blocks, one per neighbor."""
    result = Result("lldpd", "detail")
    draft: Draft | None = None
    section: str | None = None
    for number, line in enumerate(lines, start=1):
        match = LLDPD_IFACE.match(line)
        if match:
            finish_block(draft, result)
            draft = Draft(local_port=match.group(1), line=number,
                          protocol=value_of(match.group(2) or match.group(3)))
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
    finish_block(draft, result)
    result.flavor = _block_flavor(lines, result.neighbors)
    return result


def _block_field(draft: Draft, key: str, value: str, section: str | None) -> bool:
    """Store one `Key: value` line of a neighbor block; False when it is not a neighbor field."""
    if section not in _NEIGHBOR_SECTIONS:
        return False
    if key == "chassisid":
        draft.chassis_id = _split_subtype(value)[1]
    elif key == "sysname":
        draft.device = value_of(value)
    elif key == "mgmtip":
        draft.management_address = draft.management_address or value_of(value)
    elif key == "capability" and section in (None, "chassis"):
        name, _, state = value.rpartition(",")
        if name and _is_on(state):
            draft.capabilities.append(name.strip())
    elif key == "syscapenabled":
        draft.capabilities_text = value_of(value)
    elif key == "ttl":
        draft.ttl = first_int(value) if draft.ttl is None else draft.ttl
    elif key == "portid":
        draft.port_id_subtype, draft.port_id = _split_subtype(value)
    elif key == "portdescr":
        draft.port_description = value_of(value)
    else:
        return False
    return True


def _block_flavor(lines: list[str], neighbors: list[Neighbor]) -> Flavor:
    """SONiC prints lldpctl blocks for `show lldp neighbors`; NVUE's lldp-detail drops `via:` and
    puts a dash line under each `Interface:` line."""
    head = "\n".join(lines[:40])
    if re.search(r"\bnv\s+show\b", head) or any(
            LLDPD_IFACE.match(line) and "via" not in line and i + 1 < len(lines)
            and DASHES.match(lines[i + 1]) for i, line in enumerate(lines)):
        return "nvue"
    if _SONIC_COMMAND.search(head) or any(re.match(r"^Ethernet\d+$", n.local_port)
                                          for n in neighbors):
        return "sonic"
    return "lldpd"


def parse_keyvalue(lines: list[str]) -> Result:
    """`lldp.<if>.<path>=<value>` lines; a new `via` (or a second `rid`) starts a new neighbor of
    the same interface."""
    drafts: list[Draft] = []
    current: dict[str, Draft] = {}
    seen: dict[int, set[str]] = {}
    for number, line in enumerate(lines, start=1):
        match = KEYVALUE.match(line)
        if match is None:
            continue
        iface, key, value = match.group("iface"), match.group("key"), match.group("value")
        draft = current.get(iface)
        if draft is None or (key in ("via", "rid") and key in seen[id(draft)]):
            draft = Draft(local_port=iface, line=number)
            drafts.append(draft)
            current[iface] = draft
            seen[id(draft)] = set()
        seen[id(draft)].add(key)
        _keyvalue_field(draft, key, value)
    result = Result("lldpd", "keyvalue")
    for draft in drafts:
        finish_block(draft, result)
    return result


def _keyvalue_field(draft: Draft, key: str, value: str) -> None:
    parts = key.split(".")
    if key == "via":
        draft.protocol = value_of(value)
    elif parts[0] == "chassis" and len(parts) == 2 and parts[1] in _ID_SUBTYPES:
        draft.chassis_id = draft.chassis_id or value_of(value)
    elif key == "chassis.name":
        draft.device = value_of(value)
    elif key == "chassis.mgmt-ip":
        draft.management_address = draft.management_address or value_of(value)
    elif key in ("chassis.ttl", "port.ttl", "ttl.ttl", "ttl"):
        draft.ttl = first_int(value) if draft.ttl is None else draft.ttl
    elif parts[0] == "chassis" and len(parts) == 3 and parts[2] == "enabled":
        if _is_on(value):
            draft.capabilities.append(parts[1])
    elif parts[0] == "port" and len(parts) == 2 and parts[1] in _ID_SUBTYPES:
        draft.port_id_subtype, draft.port_id = parts[1], value_of(value)
    elif key == "port.descr":
        draft.port_description = value_of(value)
