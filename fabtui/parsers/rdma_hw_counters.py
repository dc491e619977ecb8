"""RDMA port counters from sysfs: mlnx-tools `show_counters <dev>` or a dump of
`/sys/class/infiniband/<dev>/ports/<p>/hw_counters/` (and the IB `counters/` directory).

    # show_counters mlx5_bond_0
    Port 1 hw counters:
    duplicate_request: 0
    np_cnp_sent: 1052612505

Also read: `grep . /sys/class/infiniband/*/ports/*/hw_counters/*` (`path:value`), `tail -n +1`
(`==> path <==` then the value), and `grep . *` run inside a directory named on a `cd` line.
The device comes from the command line or the path; `unknown` when the capture does not say.
show_counters' `Port N cm counters:` blocks go to `cm_counters`, not to the port counters.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.rdma_hw_counters import RdmaCounterDevice, RdmaHwCountersOutput
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines, normalize, to_int

KIND = "rdma-hw-counters"
MODEL = RdmaHwCountersOutput
DESCRIPTION = "show_counters <dev> / sysfs hw_counters dump: RDMA port counters (CNP, ECN, ...)"

UNKNOWN = "unknown"
_PORT = re.compile(r"^\s*Port\s+(\d+)\s+(hw\s+|cm\s+)?counters:?\s*$", re.I)
_CM_GROUPS = ("cm_rx_duplicates", "cm_rx_msgs", "cm_tx_msgs", "cm_tx_retries")
_COMMAND = re.compile(r"\bshow_counters\s+(?:-\S+\s+)*([A-Za-z][\w.-]*)")
_SYSFS = re.compile(r"/sys/class/infiniband/([^/\s]+)/ports/(\d+)"
                    r"(?:/(?:hw_)?counters(?:/([\w.\-]+))?)?")
_PATH_VALUE = re.compile(r"^\s*(?:==>\s*)?(/sys/class/infiniband/[^\s:]+?)\s*(?:<==\s*)?"
                         r"(?:[:\s]\s*([0-9][0-9,]*))?\s*$")
_COUNTER = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*[:=]\s*([0-9][0-9,]*)\s*$")
_VALUE = re.compile(r"^\s*([0-9]+)\s*$")
_KNOWN = ("np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored",
          "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err",
          "duplicate_request", "rnr_nak_retry_err", "req_cqe_error", "resp_cqe_error",
          "roce_adp_retrans", "rx_write_requests", "resp_cqe_flush_error")


def detect(text: str) -> float:
    """How sure we are that `text` is an RDMA sysfs counter dump (0..1)."""
    head = "\n".join(clean_lines(text[:30000]))
    if "NIC statistics:" in head:
        return 0.0
    if re.search(r"(?mi)^\s*Port\s+\d+\s+hw\s+counters:?\s*$", head):
        return 0.95
    if re.search(r"/sys/class/infiniband/[^/\s]+/ports/\d+/(?:hw_)?counters/\w+", head):
        return 0.9
    names = {m.group(1) for m in re.finditer(r"(?m)^\s*([a-z_]+)\s*:\s*\d+\s*$", head)}
    if len(names & set(_KNOWN)) >= 3:
        return 0.6
    return 0.0


class _Reader:
    """Current device/port while reading, and the counters so far."""

    def __init__(self) -> None:
        self.device = UNKNOWN
        self.port = UNKNOWN
        self.pending: tuple[str, str, str] | None = None
        self.cm = False
        self.devices: dict[str, dict[str, dict[str, int]]] = {}
        self.cm_counters: dict[str, dict[str, dict[str, int]]] = {}
        self.warnings: list[str] = []

    def store(self, device: str, port: str, name: str, value: str, number: int) -> None:
        """Record one counter; a value that is not an integer becomes a warning."""
        try:
            parsed = to_int(value)
        except ValueError:
            parsed = None
        if parsed is None:
            self.warnings.append(f"line {number}: {name}: not an integer: {value[:40]}")
            return
        self.devices.setdefault(device, {}).setdefault(port, {})[name] = parsed

    def store_cm(self, name: str, value: str) -> None:
        """Record a cm counter under the group its occurrence number implies."""
        counters = self.cm_counters.setdefault(self.device, {}).setdefault(self.port, {})
        seen = sum(1 for key in counters if key.rsplit("/", 1)[-1] == name)
        group = _CM_GROUPS[seen] if seen < len(_CM_GROUPS) else f"cm_group{seen}"
        parsed = to_int(value)
        if parsed is not None:
            counters[f"{group}/{name}"] = parsed

    def path(self, line: str, number: int) -> bool:
        """A line naming a sysfs path: `path:value`, `==> path <==`, or `cd path`."""
        match = _PATH_VALUE.match(line)
        sysfs = _SYSFS.search(line)
        if not sysfs:
            return False
        device, port, name = sysfs.group(1), sysfs.group(2), sysfs.group(3)
        if match and name and match.group(2) is not None:
            self.store(device, port, name, match.group(2), number)
        elif match and name:
            self.pending = (device, port, name)
        else:
            self.device, self.port = device, port
        return True

    def line(self, line: str, number: int) -> None:
        """Dispatch one line."""
        if self.pending is not None:
            value = _VALUE.match(line)
            if value:
                self.store(*self.pending, value.group(1), number)
                self.pending = None
                return
            self.pending = None
        command = _COMMAND.search(line)
        port = _PORT.match(line)
        if command:
            self.device, self.port, self.cm = command.group(1), UNKNOWN, False
        elif port:
            self.port = str(int(port.group(1)))
            self.cm = (port.group(2) or "").strip().lower() == "cm"
        elif not self.path(line, number):
            counter = _COUNTER.match(line)
            if counter and self.cm:
                self.store_cm(counter.group(1), counter.group(2))
            elif counter:
                self.store(self.device, self.port, counter.group(1), counter.group(2), number)


def parse(text: str) -> RdmaHwCountersOutput:
    """Parse a counter dump; raises `ParseError` when no counter is found."""
    reader = _Reader()
    for number, line in enumerate(clean_lines(text), start=1):
        if line.strip():
            reader.line(line, number)
    if not reader.devices:
        missing = re.search(r"(?m)^.*Device \S+ not found.*$", normalize(text))
        detail = f": {missing.group(0).strip()[:120]}" if missing else ""
        raise ParseError(KIND, None, f"no `name: value` RDMA counter found{detail}")
    devices = {name: RdmaCounterDevice(ports=ports, cm_counters=reader.cm_counters.get(name, {}))
               for name, ports in reader.devices.items()}
    return RdmaHwCountersOutput(devices=devices, warnings=reader.warnings)


def tables(result: RdmaHwCountersOutput) -> list[Table]:
    """One row per counter: device, port, counter, value."""
    columns = [left("device", "DEVICE"), left("port", "PORT"), left("counter", "COUNTER"),
               right("value", "VALUE")]
    return [Table.build(columns, [(dev, port, name, value)
                                  for dev, device in result.devices.items()
                                  for port, counters in device.ports.items()
                                  for name, value in counters.items()])]
