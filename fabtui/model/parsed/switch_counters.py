"""Switch interface counters across NOSes: SONiC, Arista EOS, Cisco NX-OS, NVUE, Onyx."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class InterfaceCounters(BaseModel):
    """One interface's state and counters, each NOS's names mapped onto common ones."""

    model_config = ConfigDict(extra="forbid")

    state: str | None = None
    """Link/oper state: `up` or `down` where clear (SONiC `U`/`D`/`X` or `UP`/`DOWN`, EOS line
    protocol, NX-OS and Onyx oper state, NVUE `--view counters` flags: `R` running), otherwise as
    printed; null when not printed or `N/A`."""
    admin_state: str | None = None
    """Administrative state `up`/`down` where printed (SONiC `X` means admin down)."""
    state_reason: str | None = None
    """Why, as printed: EOS `connected`/`notconnect`/`disabled`, NX-OS `Link not connected`."""
    rx_ok: int | None = None
    """Packets received without error (unicast + multicast + broadcast): SONiC RX_OK, EOS
    `packets input`, NX-OS `input packets`, NVUE `Total Packets`/`in-pkts`, Onyx `packets`."""
    rx_err: int | None = None
    """Input errors: SONiC RX_ERR, EOS/NX-OS `input errors`, NVUE `Total Errors`/`in-errors`,
    Onyx `error packets`."""
    rx_drp: int | None = None
    """Input discards/drops: SONiC RX_DRP, EOS/NX-OS `input discards`, NVUE `Total Drops`,
    Onyx `discard packets`."""
    rx_ovr: int | None = None
    """SONiC RX_OVR: oversize packets received."""
    tx_ok: int | None = None
    """Packets transmitted (unicast + multicast + broadcast), named as for `rx_ok`."""
    tx_err: int | None = None
    """Output errors."""
    tx_drp: int | None = None
    """Output discards/drops."""
    tx_ovr: int | None = None
    """SONiC TX_OVR: oversize packets transmitted."""
    rx_bytes: int | None = None
    """Bytes received. NVUE's scaled values (`3.37 MB`) are converted with 1 kB = 1000 B and the
    printed text is kept in `printed`."""
    tx_bytes: int | None = None
    """Bytes transmitted (see `rx_bytes`)."""
    rx_unicast: int | None = None
    """Unicast packets received."""
    rx_multicast: int | None = None
    """Multicast packets received."""
    rx_broadcast: int | None = None
    """Broadcast packets received."""
    tx_unicast: int | None = None
    """Unicast packets transmitted."""
    tx_multicast: int | None = None
    """Multicast packets transmitted."""
    tx_broadcast: int | None = None
    """Broadcast packets transmitted."""
    crc: int | None = None
    """Frames received with a bad CRC/FCS (EOS/NX-OS `CRC`, NVUE `FCS Errors`, Onyx `fcs
    errors`)."""
    fcs: int | None = None
    """The same count where the NOS calls it FCS (NVUE, Onyx); null elsewhere."""
    symbol_errors: int | None = None
    """Physical-layer symbol errors (EOS `symbol`, NVUE `Symbol Errors`, Onyx `symbol
    errors`)."""
    alignment_errors: int | None = None
    """Alignment errors."""
    runts: int | None = None
    """Undersized frames (EOS/NX-OS `runts`, NVUE `Undersize Errors`, SONiC `Undersize
    Received`)."""
    giants: int | None = None
    """Oversized frames (EOS/NX-OS `giants`, NVUE `Oversize Errors`)."""
    rx_pause: int | None = None
    """Pause frames received (EOS `PAUSE input`, NX-OS `Rx pause`, Onyx `pause packets`)."""
    tx_pause: int | None = None
    """Pause frames transmitted."""
    rx_bps: float | None = None
    """Input rate in bits/s (SONiC prints bytes/s; converted ×8 here, as printed in
    `rx_bytes_per_s`)."""
    tx_bps: float | None = None
    """Output rate in bits/s."""
    rx_bytes_per_s: float | None = None
    """Input rate in bytes/s where the tool prints bytes (SONiC RX_BPS `MB/s`, 1 MB = 10^6 B;
    Onyx `bytes/sec`)."""
    tx_bytes_per_s: float | None = None
    """Output rate in bytes/s where the tool prints bytes."""
    rx_pps: float | None = None
    """Input rate in packets/s."""
    tx_pps: float | None = None
    """Output rate in packets/s."""
    rx_util: float | None = None
    """Input utilisation in percent of line rate."""
    tx_util: float | None = None
    """Output utilisation in percent of line rate."""
    trim_packets: int | None = None
    """SONiC packet trimming: packets trimmed (TRIM / TRIM_PKTS)."""
    trim_tx_packets: int | None = None
    """SONiC packet trimming: trimmed packets sent (TRIM_TX / TRIM_TX_PKTS)."""
    trim_drop_packets: int | None = None
    """SONiC packet trimming: trimmed packets dropped (TRIM_DRP / TRIM_DRP_PKTS)."""
    fec_mode: str | None = None
    """Operational FEC mode as printed (NX-OS `oper fec state`, Onyx `Fec`)."""
    speed: str | None = None
    """Speed as printed (`100Gb/s`, `25 Gb/s`, `100 Gbps`)."""
    mtu: int | None = None
    """MTU in bytes."""
    description: str | None = None
    """Interface description."""
    link_flaps: int | None = None
    """Link state changes: EOS `link status changes since last clear`, NVUE
    `carrier-transitions` (NX-OS `interface resets` is kept in `other`)."""
    last_cleared: str | None = None
    """When the counters were last cleared, as printed (`never`, `0:27:02 ago`)."""
    other: dict[str, int | None] = {}
    """Counters with no common name, keyed by the NOS's own name in snake case with an
    `rx_`/`tx_` prefix where the NOS puts them under RX/TX (e.g. NX-OS `rx_no_buffer`, SONiC
    detailed `rx_pkts_64_octets`, NVUE `rx_acl_drops`)."""
    printed: dict[str, str] = {}
    """Values printed with a scaled unit, by field name, as printed (e.g. `{"rx_bytes": "3.37
    MB"}`), so a rounded conversion is visible."""


class SwitchCounters(ParsedOutput):
    """Interface counters from a switch CLI, one entry per interface as printed."""

    kind: Literal["switch-counters"] = "switch-counters"
    flavor: Literal["sonic", "eos", "nxos", "nvue", "onyx"]
    """Which switch OS printed it (detected from the output's shape)."""
    view: str
    """Which command form: `counters` (SONiC default), `counters-all` (`-a`), `counters-errors`,
    `counters-rates`, `counters-trim`, `counters-rif`, `counters-detailed`, `counters-json`,
    `show-interfaces` (EOS/NX-OS), `counters-table` (EOS `show interfaces counters`, NX-OS
    `show interface counters`), `counters-errors` (also EOS/NX-OS `... counters errors`),
    `counters-discards` (EOS `show interfaces counters discards`), `nv-counters`,
    `nv-counters-flat`, `nv-counters-json`, `nv-counters-errors` / `nv-counters-drops` /
    `nv-counters-pktdist` (NVUE `nv show interface <if> counters errors|drops|pktdist`, one
    Counter/Receive/Transmit table), `nv-view-counters` (`nv show interface --view counters`,
    every interface), `nv-view-counters-json` (`nv show interface counters -o json`, every
    interface's `counters.netstat`), `onyx-text`, `onyx-json`."""
    command: str | None = None
    """The command line, when the capture shows it after a prompt."""
    interfaces: dict[str, InterfaceCounters]
    """Interface name as printed -> counters."""
    period_s: int | None = None
    """SONiC `-p N`: the counters are deltas over this many seconds."""
    last_cached: str | None = None
    """SONiC `Last cached time was ...`: counters are deltas since that (cleared) snapshot."""
