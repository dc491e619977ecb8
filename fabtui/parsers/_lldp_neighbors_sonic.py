"""SONiC `show lldp table` for the lldp-neighbors parser. Not a parser.

Tabulate columns `LocalPort RemoteDevice RemotePortID Capability RemotePortDescr`; cells may be
empty or hold spaces; a `Total entries displayed:` footer; the Enterprise SONiC variant draws one
unbroken dash line. SONiC's `show lldp neighbors` prints lldpctl blocks
(`_lldp_neighbors_lldpd.py`).
"""

from __future__ import annotations

import re

from fabtui.parsers._lldp_neighbors_common import LLDP_KIND, Result, header_index, read_column_table
from fabtui.parsers.errors import ParseError

SONIC_HEADER = re.compile(r"^\s*LocalPort\s+RemoteDevice\s+RemotePortID\b")


def parse_sonic_table(lines: list[str]) -> Result:
    """SONiC `show lldp table` (and Enterprise SONiC's variant)."""
    header = header_index(lines, SONIC_HEADER)
    names = {"localport": "local_port", "remotedevice": "device", "remoteportid": "port_id",
             "capability": "capabilities", "remoteportdescr": "port_description"}
    drafts, warnings, total, footer = read_column_table(lines, header, names)
    if not drafts and not footer:
        raise ParseError(LLDP_KIND, header + 1, "`show lldp table` header without rows or the "
                                                "`Total entries displayed` footer (truncated?)")
    if not footer:
        warnings.append("no `Total entries displayed` footer (truncated?)")
    return Result("sonic", "table", [d.build() for d in drafts], warnings, total)
