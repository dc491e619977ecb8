"""LLDP neighbor tables: what is really cabled to each port (switch CLIs and lldpd on hosts)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class LldpNeighbor(BaseModel):
    """One neighbor heard on one local port (a port hearing several neighbors has several)."""

    model_config = ConfigDict(extra="forbid")

    local_port: str
    """This device's port, as printed: `Ethernet0` (SONiC), `Et1` (EOS table), `Ethernet1` (EOS
    detail), `Eth1/1` (NX-OS), `eth0` / `enp24s0f0np0` (lldpd on a host), `swp1` (Cumulus)."""
    device: str | None
    """The neighbor's system name (SysName, RemoteDevice, Device ID, Neighbor Device ID, Remote
    Host); null when the neighbor does not advertise one (some tables then print its chassis
    MAC, which is kept as printed)."""
    port_id: str | None
    """The neighbor's port id as printed, without the subtype word lldpd prints before it
    (`ifname swp1` -> `swp1`, `mac 0c:42:a1:..` -> `0c:42:a1:..`). Hosts running lldpd often
    send their MAC here and the netdev name in `port_description`."""
    port_id_subtype: str | None = None
    """How the neighbor identifies its port: lldpd's word (`ifname`, `mac`, `local`, `ifalias`,
    `ip`); EOS detail and NVUE types are mapped to the same words. Null when not printed."""
    port_description: str | None = None
    """The neighbor's port description (PortDescr, RemotePortDescr, Port Description)."""
    chassis_id: str | None = None
    """The neighbor's chassis id without the subtype word (usually its base MAC), as printed."""
    capabilities: str | None = None
    """Enabled capabilities as printed: `BR` (SONiC/NX-OS codes), `Bridge, Router` (lldpd
    `Capability: X, on` lines joined in printed order, EOS detail `Enabled Capabilities`)."""
    ttl: int | None = None
    """Advertised time to live / hold time in seconds (TTL, Hold-time, Time To Live)."""
    management_address: str | None = None
    """The first management address the neighbor advertises (MgmtIP, Management Address)."""
    protocol: str | None = None
    """Discovery protocol lldpd heard the neighbor with (`LLDP`, `CDPv2`, `EDP`, ...), when
    printed (`Interface: eth0, via: LLDP`)."""


class LldpNeighbors(ParsedOutput):
    """LLDP neighbors of every port of one device, in printed order."""

    kind: Literal["lldp-neighbors"] = "lldp-neighbors"
    flavor: Literal["sonic", "eos", "nxos", "lldpd", "nvue"]
    """Who printed it: `sonic` (`show lldp table|neighbors`), `eos` (Arista), `nxos` (Cisco
    NX-OS, and IOS which prints the same table), `lldpd` (`lldpcli show neighbors`, `lldpctl`,
    on hosts and Cumulus), `nvue` (Cumulus `nv show interface lldp...`, NCLU `net show lldp`)."""
    view: str
    """`table` (one row per neighbor), `detail` (one block per neighbor) or `keyvalue`
    (`lldpctl -f keyvalue`)."""
    neighbors: list[LldpNeighbor]
    """Every neighbor in printed order; a port with several neighbors appears several times. An
    empty list is a real answer: no neighbor heard."""
    total_entries: int | None = None
    """The `Total entries displayed:` footer (SONiC, NX-OS), when printed; it may differ from
    the number of rows (a warning says so)."""
