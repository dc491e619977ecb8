"""`ibnetdiscover` (infiniband-diags): fabric topology (`-p` port report, default topology file,
`-l` node list)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class IbLinkEnd(BaseModel):
    """One end of a link."""

    model_config = ConfigDict(extra="forbid")

    type: str | None
    """Node type as `-p` prints it: `CA`, `SW` or `RT` (topology `Ca`/`Switch`/`Rt` and ids
    `H-`/`S-`/`R-` are mapped to these)."""
    lid: int | None = None
    """LID (a switch's LID for every switch port; the CA port's LID)."""
    port: int | None = None
    """Port number."""
    guid: str | None = None
    """Port GUID as printed (`0x7cfe...` in `-p`; the parenthesised port GUID, or the GUID of
    the `S-`/`H-` id, in the topology file); may be partly `<redacted>`."""
    name: str | None = None
    """Node description as printed, e.g. `o0001 HCA-1`, `MF0;leaf-1:MQM8790/U1`."""
    node_id: str | None = None
    """Topology-file node id, e.g. `S-0002c903000bf1a0`, `H-b83f...` (topology format only)."""


class IbLink(BaseModel):
    """One printed port line: this end, the peer, width and speed."""

    model_config = ConfigDict(extra="forbid")

    local: IbLinkEnd
    """The end the line belongs to (the node block or the first columns of `-p`)."""
    remote: IbLinkEnd | None
    """The peer; null for a port `-p` lists without a peer (down or unconnected)."""
    width: str | None
    """Active width as printed, e.g. `4x`, `2x`."""
    speed: str | None
    """Active speed as printed, e.g. `EDR`, `NDR`, `SDR`, `???`."""
    degraded: bool = False
    """True when width or speed is below the most common width/speed of the capture, or the
    speed is unknown (`???`), e.g. `4x SDR` on an EDR fabric."""
    degraded_reason: str | None = None
    """Why the link is flagged, e.g. `speed SDR below EDR`."""
    reverse_of: int | None = None
    """Index in `links` of the same link printed from the other end earlier; null for the
    first sighting (ibnetdiscover prints each link from both ends)."""
    line: int
    """1-based input line."""


class IbNode(BaseModel):
    """A switch, CA or router seen in the capture (as a node block or as a link end)."""

    model_config = ConfigDict(extra="forbid")

    type: str
    """`CA`, `SW` or `RT`."""
    name: str | None = None
    """Node description as printed."""
    guid: str | None = None
    """Node GUID (topology `switchguid=`/`caguid=` or node id) or the first port GUID seen."""
    lid: int | None = None
    """LID (switch LID; a CA's first port LID seen)."""
    node_id: str | None = None
    """Topology-file id, e.g. `S-9c05...`."""
    ports: int | None = None
    """Number of ports from the topology node line (`Switch 129 ...`) or `-l`."""
    vendid: str | None = None
    """`vendid=` of the node block, as printed."""
    devid: str | None = None
    """`devid=` of the node block, as printed."""
    sysimgguid: str | None = None
    """`sysimgguid=` of the node block, as printed."""


class IbnetdiscoverOutput(ParsedOutput):
    """Links and nodes of the fabric as discovered."""

    kind: Literal["ibnetdiscover"] = "ibnetdiscover"
    format: Literal["ports", "topology", "list"]
    """`ports` (`-p`), `topology` (default output) or `list` (`-l`)."""
    links: list[IbLink]
    """Every port line, in the order printed (each link usually appears twice, see
    `reverse_of`)."""
    switches: list[IbNode]
    """Switches, in the order first seen."""
    cas: list[IbNode]
    """Channel adapters (hosts), in the order first seen."""
    routers: list[IbNode]
    """Routers, in the order first seen."""
    expected_width: str | None = None
    """The most common width among connected links (the reference for `degraded`)."""
    expected_speed: str | None = None
    """The most common speed among connected links (the reference for `degraded`)."""
    degraded_links: int = 0
    """How many entries of `links` are flagged `degraded`."""
