"""Kernel log lines that matter to GPU-fabric triage (dmesg, dmesg -T, journalctl -k, syslog).

Only lines that say something about links, ports, bonds, PCIe, the NIC driver, NVLink/NVSwitch
or GPU health become events; other kernel lines are counted in `line_count` and skipped.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput

EventType = Literal[
    "xid", "sxid", "gpu_fallen_off_bus", "nvlink_error", "fabricmanager", "ecc", "gpu_error",
    "link_down", "link_up", "port_state", "bond_slave", "module_event", "mlx5_error",
    "pcie_downtrained", "pcie_aer", "pcie_hotplug",
]


class KernelLogEvent(BaseModel):
    """One triage-relevant log line (continuation lines of the same report are in `details`)."""

    model_config = ConfigDict(extra="forbid")

    type: EventType
    """What happened: `xid` (GPU Xid, any code but 79), `sxid` (NVSwitch SXid),
    `gpu_fallen_off_bus` (Xid 79, `GPU has fallen off the bus`, or the R535+ message over
    several `NVRM:` lines, `The NVIDIA GPU <address>` ... `fallen off the bus`, with no Xid
    and no code), `nvlink_error`,
    `fabricmanager` (nv-fabricmanager NVSwitch error lines), `ecc` (GPU ECC / row-remap lines
    that are not Xids, EDAC host-memory errors), `gpu_error` (other NVRM failures),
    `link_down` / `link_up` (a netdev lost or regained its link or carrier), `port_state`
    (RDMA port state change, `Port: 1 Link ACTIVE`), `bond_slave` (bonding enslaves, disables,
    re-enables a member), `module_event` (NIC transceiver plugged/unplugged), `mlx5_error`
    (mlx5 command failures and timeouts, health/firmware errors, TX timeouts, error CQEs),
    `pcie_downtrained` (`available PCIe bandwidth, limited by ...`), `pcie_aer` (AER / PCIe Bus
    Error / DPC), `pcie_hotplug` (pciehp slot link down/up, card not present)."""
    timestamp: float | str | None = None
    """Seconds since boot when the line has `[12345.678901]`, otherwise the wall-clock text as
    printed (`Mon Jan  1 10:00:00 2024`, `Mar 03 18:39:57`, ISO 8601); null when it has none."""
    uptime_s: float | None = None
    """Seconds since boot (`[12345.678901]`), when printed."""
    wallclock: str | None = None
    """Wall-clock time as printed (dmesg -T, journal or syslog prefix), when printed."""
    host: str | None = None
    """Host name from a journal/syslog prefix or a pdsh `host: ` prefix."""
    source: str | None = None
    """The emitter: driver or tag, e.g. `mlx5_core`, `NVRM`, `nvidia-nvswitch`, `bonding`,
    `pcieport`, `nv-fabricmanager`, `systemd-networkd`."""
    device: str | None = None
    """The device the event is about: netdev (`enp83s0f0np0`), RDMA device (`mlx5_3`),
    NVSwitch (`nvidia-nvswitch3`), or a PCI address (`0000:3b:00.0`; GPU Xids as printed,
    e.g. `0000:10:1c`)."""
    pci: str | None = None
    """PCI address printed on the line, as printed (`0000:53:00.0`, `0000:01:00`)."""
    interface: str | None = None
    """Network interface for link and bond events (the bond member for `bond_slave`)."""
    bond: str | None = None
    """Bond master for `bond_slave` events, e.g. `bond0`."""
    port: int | None = None
    """Port number: RDMA port for `port_state`, transceiver module for `module_event`,
    NVLink/NVSwitch link or port for `sxid`, `fabricmanager`, `nvlink_error` and NVLink Xids
    (`... fatal error detected on link 4`)."""
    state: str | None = None
    """New state: `ACTIVE`/`DOWN`/`INIT`/`ARMED` for `port_state`; `up`/`down` for links;
    `enslaved`, `released`, `disabled`, `down`, `up`, `active`, `backup`, `speed_changed`,
    `no_active` for `bond_slave`; `plugged`/`unplugged`/`error` for `module_event`;
    `link down`/`link up`/`card not present`/`card present` for `pcie_hotplug`."""
    code: int | None = None
    """Xid or SXid number (fabricmanager: the NVSwitch error number)."""
    severity: str | None = None
    """Severity as printed: `Non-fatal`/`Fatal` (SXid), `non-fatal`/`fatal` (fabricmanager),
    `Corrected`,
    `Uncorrected (Non-Fatal)`, `Uncorrected (Fatal)` (AER), `CE`/`UE` (EDAC)."""
    pid: int | None = None
    """Process id of the Xid (newer drivers print `pid=1234`); null when not printed."""
    process: str | None = None
    """Process name of the Xid (`name=python`); null when not printed or `<unknown>`."""
    message: str
    """The rest of the line after the device (Xid: after the code, pid and name)."""
    details: list[str] = []
    """Continuation lines of the same report (SXid `Severity ...`/`Data {...}`, AER
    `device [10de:2330] error status/mask=...`, `[ 0] RxErr`)."""
    text: str
    """The whole log message without its timestamp and host prefix."""
    line: int
    """1-based line number in the input."""


class KernelLog(ParsedOutput):
    """Triage-relevant events from a kernel log, with per-code and per-interface summaries."""

    kind: Literal["kernel-log"] = "kernel-log"
    """Always `kernel-log`."""
    events: list[KernelLogEvent]
    """Relevant events in input order."""
    xids: dict[int, int] = Field(default_factory=dict)
    """GPU Xid code -> number of Xid lines (79 included)."""
    sxids: dict[int, int] = Field(default_factory=dict)
    """NVSwitch SXid code -> number of SXid reports (continuation lines not counted)."""
    link_flaps: dict[str, int] = Field(default_factory=dict)
    """Interface -> number of `link_down` events (mlx5 `Link down`, `NIC Link is Down`,
    `Lost carrier`)."""
    port_downs: dict[str, int] = Field(default_factory=dict)
    """RDMA device and port (`mlx5_3/1`) -> number of `port_state` DOWN events."""
    line_count: int = 0
    """Number of lines read as kernel log lines (relevant or not)."""
