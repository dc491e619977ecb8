"""Kernel ring buffer / journal lines that matter to GPU-fabric triage.

Accepted line shapes (a pdsh `host: `, srun or mpirun prefix in front is removed)::

    [ 4441.768101] mlx5_core 0000:53:00.0 enp83s0f0np0: Link up          dmesg
    [Mon Jan  1 10:00:00 2024] NVRM: Xid (PCI:0000:10:1c): 63, pid=...   dmesg -T
    2024-01-01T10:00:00,123456+00:00 bond0: (slave eth0): ...            dmesg --time-format iso
    Mar 03 18:39:57 host kernel: pcieport 0000:00:03.0: AER: ...         journalctl -k, syslog
    Mar 03 18:39:57 host nv-fabricmanager[5183]: detected NVSwitch ...   journal (other tags)
    kern  :err   : [ 4428.4] ...  /  <3>[ 4428.4] ...                     dmesg -x / dmesg -r

A first line cut inside its `[` (` 4428.423595] ...`) still reads. Only triage-relevant messages
become events (see `KernelLogEvent.type`); every other log line is counted and skipped. SXid and
AER reports span several lines: the follow-up lines land in the first line's `details`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from fabtui.model.parsed.kernel_log import KernelLog, KernelLogEvent
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import KeptLines, Streamed, row_defaults
from fabtui.parsers.text import split_lines, strip_launcher_prefix

KIND = "kernel-log"
MODEL = KernelLog
DESCRIPTION = ("kernel log (dmesg, dmesg -T, journalctl -k, syslog): Xid/SXid, link flaps, "
               "bond members, RDMA port state, PCIe AER/downtraining, mlx5 errors")

_WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_UPTIME = re.compile(r"^\[?\s*(?P<up>\d+\.\d+)\]\s?")
_CTIME = re.compile(rf"^\[(?P<wall>{_WEEKDAY} {_MONTH} +\d+ \d\d:\d\d:\d\d \d{{4}})\]\s?")
_CALLER = re.compile(r"^\[\s*[TC]\d+\]\s?")  # CONFIG_PRINTK_CALLER: `[  T292]`
_FMLOG = re.compile(rf"^\[(?P<wall>{_MONTH} \d\d \d{{4}} \d\d:\d\d:\d\d)\] \[(?P<level>\w+)\] "
                    r"\[tid \d+\] ")
_HUMAN = re.compile(rf"^\[(?P<wall>{_MONTH} ?\d+ \d\d:\d\d|\s*\+\d+\.\d+)\]\s?")
_ISO = re.compile(r"^(?P<wall>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?P<frac>[.,]\d+)?"
                  r"(?:Z|[+-]\d\d:?\d\d)?)\s+")
_SYSLOG = re.compile(rf"^(?P<wall>{_MONTH} +\d+ \d\d:\d\d:\d\d(?:\.\d+)?)\s+")
_TAGGED = re.compile(r"^(?P<host>[\w.-]+) (?P<tag>[\w./@-]+?)(?:\[(?P<pid>\d+)\])?: ?(?P<rest>.*)$")
_LEVEL = re.compile(r"^(?:<\d+>|(?:kern|user|mail|daemon|auth|syslog|lpr|news|local\d)\s*:"
                    r"\s*(?:emerg|alert|crit|err|warn|notice|info|debug)\s*:\s?)")
_PDSH = re.compile(rf"^(?P<host>[A-Za-z][\w.-]*): (?=\[|\s*\d+\.\d+\]|\d{{4}}-\d\d-\d\d|{_MONTH} )")
_PCI = r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?"
_PCI_ANY = re.compile(rf"(?:PCI:)?(?P<pci>{_PCI})")
_DEV_PRINTK = re.compile(rf"^(?P<drv>[\w-]+) (?P<pci>{_PCI})(?: (?P<name>[\w.@-]+))?: "
                         r"(?P<msg>.*)$")
_CLASS_PRINTK = re.compile(r"^(?P<drv>infiniband|net|nvme) (?P<name>[\w.@-]+): (?P<msg>.*)$")
_NAMED = re.compile(r"^(?P<name>[\w.@-]+): (?P<msg>.*)$")
_EMITTERS = frozenset({"NVRM", "nvidia-nvlink", "nvidia-peermem", "nvidia-modeset", "IPv6",
                       "IPv4", "ipoib", "ib_core", "mlx5_ib", "mlx5_core", "pciehp"})

_SXID = re.compile(rf"\bSXid \((?:PCI:)?(?P<pci>{_PCI})\):\s*(?P<code>\d+),?\s*(?P<rest>.*)$")
_XID = re.compile(rf"\bXid \((?:PCI:)?(?P<pci>{_PCI})\):\s*(?P<code>\d+),?\s*(?P<rest>.*)$")
_XID_PID = re.compile(r"^pid=(?P<pid>[^,]*),\s*(?:name=(?P<name>[^,]*),\s*)?(?P<msg>.*)$")
_FALLEN = re.compile(r"fallen off the bus", re.I)
# Newer drivers (R535+) say it over several `NVRM:` lines, the address only on the first:
#   NVRM: The NVIDIA GPU 0000:b3:00.0
#   NVRM: (PCI ID: 10de:26b5) installed in this system has
#   NVRM: fallen off the bus and is not responding to commands.
_GPU_INTRO = re.compile(rf"^NVRM: The NVIDIA GPU (?P<pci>{_PCI})\b(?P<rest>.*)$")
_FM_ERROR = re.compile(r"detected NVSwitch (?P<sev>non-fatal|fatal) error (?P<code>\d+)", re.I)
_FM_WORDS = re.compile(r"\b(?:error|fail\w*|fatal|degraded|timeout|timed out)\b", re.I)
_DOWNTRAINED = re.compile(r"available PCIe bandwidth, limited by", re.I)
_AER = re.compile(r"\bAER:.*(?:\b(?:error|received|failed)\b|can't recover)|PCIe Bus Error|"
                  r"\bDPC: containment event", re.I)
_AER_DETAIL = re.compile(r"^(?:device \[[0-9a-f]{4}:[0-9a-f]{4}\] error status/mask|"
                         r"\[\s*\d+\]\s*\w|aer_\w+|TLP Header|\s*Error of this Agent)", re.I)
_AER_SEVERITY = re.compile(r"severity=(?P<sev>[^,]+)|AER: (?:Multiple )?(?P<sev2>Corrected|"
                           r"Correctable|Uncorrected \((?:Non-)?Fatal\)|Uncorrectable|Fatal)",
                           re.I)
_AER_SOURCE = re.compile(rf"(?:received|from):? (?P<pci>{_PCI})")
_HOTPLUG = re.compile(r"pciehp.*?(?P<slot>Slot\([^)]*\)):?\s*(?P<what>Link Down|Link Up|"
                      r"Card not present|Card present)", re.I)
# The look-behinds start an optional name only where a name starts: the same leftmost match,
# without retrying the name from every character of every word (quadratic in the line).
_PORT_STATE = re.compile(r"(?:(?<![\w.-])(?P<dev>[\w.-]+): )?\bPort:? (?P<port>\d+) Link "
                         r"(?P<state>[A-Za-z_]+)")
_BOND_NAME = re.compile(r"^bond[\w.-]*$")
_SLAVE = re.compile(r"^\(slave (?P<slave>[^)]+)\):\s*(?P<rest>.*)$")
_SLAVE_IN_TEXT = re.compile(r"(?:for interface|Enslaving|Releasing (?:backup |active )?"
                            r"interface|making interface|slave) (?P<slave>[\w.@-]+)", re.I)
_LINK = re.compile(r"^(?:(?!NIC\b)(?P<ifname>[\w.@-]+):? )?Link (?:is )?(?P<st>down|up)\b", re.I)
_NIC_LINK = re.compile(r"(?:(?<![\w.@-])(?P<ifname>[\w.@-]+):?\s+)?NIC Link is (?P<st>down|up)\b",
                       re.I)
_CARRIER = re.compile(r"^(?P<what>Lost|Gained) carrier\b", re.I)
_MODULE = re.compile(r"Port module event(?P<err>\[error\])?:\s*module (?P<module>\d+),\s*"
                     r"(?P<what>.*)$", re.I)
_ECC = re.compile(r"\b(?:ECC|DBE|SBE|row remap\w*|remapp\w*|retired pages?|page retirement)\b",
                  re.I)
_EDAC = re.compile(r"^EDAC (?P<mc>\S+?):?\s.*?\b(?P<sev>CE|UE)\b")
_NVLINK = re.compile(r"nvlink", re.I)
_FAILURE = re.compile(r"\b(?:error\w*|fail\w*|fatal|fault\w*|timeout|timed out|down)\b", re.I)
_MLX5_ERROR = re.compile(r"\b(?:err\w*|fail\w*|timeout|timed out|health compromised|fatal|"
                         r"assert\w*|syndrome|insufficient power|unrecoverable|crdump|"
                         r"tx timeout|no done completion)\b", re.I)
_WATCHDOG = re.compile(r"NETDEV WATCHDOG: (?P<ifname>[\w.@-]+) \((?P<drv>[\w-]+)\): "
                       r"transmit queue(?: \d+)? timed out")
_LINK_NUMBER = re.compile(r"\blink (\d+)", re.I)
_PORT_NUMBER = re.compile(r"\bport (\d+)", re.I)
_MARKERS = re.compile(r"mlx5_core|mlx5_ib|NVRM:|\bS?Xid \(|nvidia-nvswitch|nv-fabricmanager|"
                      r"\bbond\d+: |bonding:|pcieport|\bAER: |PCIe Bus Error|available PCIe "
                      r"bandwidth|NIC Link is|\bLink (?:up|down)\b|Lost carrier|EDAC |"
                      r"Port: \d+ Link|NVSwitch (?:non-)?fatal error")
_FOREIGN = re.compile(r"NCCL (?:INFO|WARN)|NVIDIA-SMI \d|NVSMI LOG|#\s+size\s+count|"
                      r"Waiting for client to connect|#bytes\s+#iterations")


@dataclass
class _Line:
    """A log line split into its prefix parts and the kernel (or daemon) message."""

    message: str
    uptime: float | None = None
    wallclock: str | None = None
    host: str | None = None
    tag: str | None = None
    prefixed: bool = False


@dataclass
class _Subject:
    """Who printed a message: driver, PCI address, device name, and the rest of the text."""

    driver: str | None
    pci: str | None
    name: str | None
    msg: str


def detect(text: str) -> float:
    """How sure we are that `text` is a kernel log (0..1)."""
    lines = text[:50000].splitlines()[:2000]
    stamped = markers = foreign = 0
    for raw in lines:
        line = _split(_strip_prefixes(raw)[1])
        stamped += line.prefixed
        markers += _MARKERS.search(line.message) is not None
        foreign += _FOREIGN.search(raw) is not None
    if foreign and (foreign >= stamped or not markers):
        return 0.0
    if stamped and markers:
        return 0.95 if markers >= 2 else 0.9
    if markers and any(_XID.search(x) or _SXID.search(x) for x in lines):
        return 0.6
    if stamped >= 3:
        return 0.45
    return 0.2 if stamped else 0.0


def parse(text: str) -> KernelLog:
    """Parse kernel log text; raises `ParseError` when no line reads as a kernel log line."""
    return parse_lines(split_lines(text)).assemble()


def parse_lines(lines: Iterable[str]) -> Streamed[KernelLog]:
    """Parse normalised lines (`fabtui parse` reads files this way); the events on demand.

    The lines are read once: the summaries are tallied as events are found, and only the
    lines that made an event (or continued one) are kept, to be read into events again when
    they are written. A log of millions of lines costs those lines' text, not a model each.
    """
    kept = KeptLines()
    tally = _Tally()
    for _ in _events(enumerate(lines, start=1), kept, tally):
        pass
    if tally.line_count == 0:
        raise ParseError(KIND, None, "no kernel log line found (no dmesg/journal timestamp and "
                                     "no known driver message)")
    head = KernelLog(events=[], xids=dict(sorted(tally.xids.items())),
                     sxids=dict(sorted(tally.sxids.items())), link_flaps=dict(tally.flaps),
                     port_downs=dict(tally.port_downs), line_count=tally.line_count)

    def dumped() -> Iterator[dict[str, object]]:
        return _events(kept, None, tally)

    def models() -> Iterator[KernelLogEvent]:
        return (KernelLogEvent.model_validate(values) for values in dumped())

    return Streamed(head, {"events": models}, {"events": dumped})


_CONTINUES = 255
"""In `_Tally.readers`: the kept line continued the event above it."""


@dataclass
class _Tally:
    """The summaries of `KernelLog`, counted as events are found, and which reader read
    each kept line (so reading them again tries that reader only)."""

    xids: Counter[int] = field(default_factory=Counter)
    sxids: Counter[int] = field(default_factory=Counter)
    flaps: Counter[str] = field(default_factory=Counter)
    port_downs: Counter[str] = field(default_factory=Counter)
    line_count: int = 0
    readers: bytearray = field(default_factory=bytearray)

    def add(self, event: dict[str, object]) -> None:
        kind, code = event["type"], event["code"]
        if isinstance(code, int) and kind in ("xid", "gpu_fallen_off_bus"):
            self.xids[code] += 1
        if isinstance(code, int) and kind == "sxid":
            self.sxids[code] += 1
        if kind == "link_down" and event["interface"]:
            self.flaps[str(event["interface"])] += 1
        if kind == "port_state" and event["state"] == "DOWN":
            self.port_downs[f"{event['device']}/{event['port']}"] += 1


def _events(numbered: Iterable[tuple[int, str]], kept: KeptLines | None,
            tally: _Tally) -> Iterator[dict[str, object]]:
    """The events of numbered lines, each as `model_dump(mode="json")` gives it, yielded once
    its continuation lines are in.

    With `kept` (the first reading) the lines that count are kept and tallied; without it,
    `numbered` are those kept lines, read again with the reader that read each.
    """
    last: dict[str, object] | None = None
    for index, (number, raw) in enumerate(numbered):
        pdsh_host, cleaned = _strip_prefixes(raw)
        if not cleaned.strip():
            continue
        line = _split(cleaned)
        line.host = line.host or pdsh_host
        replay = None if kept is not None else tally.readers[index]
        if replay == _CONTINUES:
            assert last is not None
            _is_continuation(line, last)  # joins the details, as on the first reading
            continue
        if replay is None and last is not None and _is_continuation(line, last):
            assert kept is not None
            kept.add(number, raw)
            tally.readers.append(_CONTINUES)
            tally.line_count += 1
            continue
        found = _classify(line, number, _READERS, 0) if replay is None else \
            _classify(line, number, _READERS[replay:replay + 1], replay)
        event = found[1] if found is not None else None
        if event is not None:
            if last is not None:
                yield last
            last = event
        if kept is not None:
            if found is not None:
                kept.add(number, raw)
                tally.readers.append(found[0])
                tally.add(found[1])
            if line.prefixed or event is not None:
                tally.line_count += 1
    if last is not None:
        yield last


def _strip_prefixes(raw: str) -> tuple[str | None, str]:
    """Launcher prefixes, mail quoting and a pdsh `host: ` (only before a timestamp) removed."""
    line = strip_launcher_prefix(raw)[1]
    line = re.sub(r"^(?:>[ \t]?)+", "", line).rstrip()
    pdsh = _PDSH.match(line)
    if pdsh:
        return pdsh.group("host"), line[pdsh.end():]
    return None, line


def _split(line: str) -> _Line:
    """Timestamp, host and tag taken off the front of a log line."""
    out = _Line(message=line.strip())
    rest = line.strip()
    level = _LEVEL.match(rest)
    if level:
        rest = rest[level.end():]
        out.prefixed = True
    rest = _take_wallclock(out, rest)
    if rest.startswith("kernel: "):  # journal/syslog export without date and host
        out.tag, out.prefixed = "kernel", True
        rest = rest[len("kernel: "):]
    uptime = _UPTIME.match(rest)
    if uptime and (rest.startswith("[") or not out.prefixed):
        out.uptime = float(uptime.group("up"))
        out.prefixed = True
        rest = rest[uptime.end():]
        rest = _take_tag(out, rest, kernel_only=True)
        uptime = _UPTIME.match(rest) if rest.startswith("[") else None
        if uptime:
            out.uptime = float(uptime.group("up"))
            rest = rest[uptime.end():]
        rest = _CALLER.sub("", rest, count=1)
    out.message = rest.strip()
    return out


def _take_wallclock(out: _Line, rest: str) -> str:
    """A wall-clock prefix (dmesg -T/-H, ISO, syslog), with the syslog host and tag after it."""
    for pattern in (_CTIME, _HUMAN, _FMLOG):
        match = pattern.match(rest)
        if match:
            out.wallclock = match.group("wall").strip()
            out.prefixed = True
            if pattern is _FMLOG:  # /var/log/fabricmanager.log
                out.tag = "nv-fabricmanager"
            return rest[match.end():]
    iso = _ISO.match(rest)
    if iso:
        out.wallclock = iso.group("wall")
        out.prefixed = True
        # dmesg --time-format iso writes a decimal comma and no host; syslog writes a host.
        frac = iso.group("frac") or ""
        return rest[iso.end():] if frac.startswith(",") else _take_tag(out, rest[iso.end():])
    syslog = _SYSLOG.match(rest)
    if syslog:
        out.wallclock = syslog.group("wall")
        out.prefixed = True
        return _take_tag(out, rest[syslog.end():])
    return rest


def _take_tag(out: _Line, rest: str, kernel_only: bool = False) -> str:
    """`host tag[pid]: ` of journal and syslog lines (only `kernel` after a dmesg bracket)."""
    match = _TAGGED.match(rest)
    if not match or (kernel_only and match.group("tag") != "kernel"):
        return rest
    out.host = match.group("host")
    out.tag = match.group("tag")
    return match.group("rest")


def _subject(message: str) -> _Subject:
    """Driver, PCI address and device name printed in front of a kernel message."""
    match = _DEV_PRINTK.match(message)
    if match:
        return _Subject(match.group("drv"), match.group("pci"), match.group("name"),
                        match.group("msg"))
    match = _CLASS_PRINTK.match(message)
    if match:
        return _Subject(match.group("drv"), None, match.group("name"), match.group("msg"))
    match = _NAMED.match(message)
    if match:
        name = match.group("name")
        if name in _EMITTERS:
            return _Subject(name, None, None, match.group("msg"))
        return _Subject(None, None, name, match.group("msg"))
    return _Subject(None, None, None, message)


def _is_continuation(line: _Line, last: dict[str, object]) -> bool:
    """SXid `Severity`/`Data` lines and AER register dumps belong to the report above them
    (`last`, whose `details` they join)."""
    details = last["details"]
    assert isinstance(details, list)
    sxid = _SXID.search(line.message)
    if sxid and last["type"] == "sxid" and last["code"] == int(sxid.group("code")) and \
            last["pci"] == sxid.group("pci") and re.match(r"(?:Severity|Data)\b",
                                                           sxid.group("rest")):
        details.append(sxid.group("rest"))
        return True
    if _open_intro(last) and line.message.startswith("NVRM: ") and \
            not _GPU_INTRO.match(line.message) and not _XID.search(line.message):
        part = line.message[len("NVRM: "):].strip()
        details.append(part)
        last["message"] = f"{last['message']} {part}"
        if _FALLEN.search(str(last["message"])):
            last["type"] = "gpu_fallen_off_bus"
        return True
    if last["type"] == "pcie_aer":
        subject = _subject(line.message)
        detail = re.sub(r"^AER:\s*", "", subject.msg.strip())
        if subject.pci == last["pci"] and _AER_DETAIL.match(detail):
            details.append(detail)
            return True
    return False


def _open_intro(last: dict[str, object]) -> bool:
    """`last` is a multi-line `NVRM: The NVIDIA GPU <address>` message not yet ended (by a
    full stop) whose next `NVRM:` lines continue it."""
    return last["source"] == "NVRM" and str(last["text"]).startswith("NVRM: The NVIDIA GPU ") \
        and not str(last["message"]).rstrip().endswith(".")


def _classify(line: _Line, number: int, readers: tuple[_Reader, ...],
              first: int) -> tuple[int, dict[str, object]] | None:
    """(which reader, the event) a log line reports, the event as its JSON fields; None when
    it is not triage-relevant. `readers` are `_READERS` from position `first` on."""
    subject = _subject(line.message)
    for position, reader in enumerate(readers, start=first):
        fields = reader(line, subject)
        if fields is not None:
            return position, _event(line, number, subject, fields)
    return None


_DEFAULTS = row_defaults(KernelLogEvent)


def _event(line: _Line, number: int, subject: _Subject,
           fields: dict[str, object]) -> dict[str, object]:
    """An event's JSON fields (in the model's order) from a reader's fields plus what every
    line carries. Every value already has its JSON type: tests compare it with the model's
    dump, and building a model per event is what made large logs cost gigabytes."""
    values = dict(_DEFAULTS)
    values.update({
        "timestamp": line.uptime if line.uptime is not None else line.wallclock,
        "uptime_s": line.uptime, "wallclock": line.wallclock, "host": line.host,
        "source": subject.driver or line.tag, "pci": subject.pci,
        "device": subject.name or subject.pci, "message": subject.msg.strip(),
        "text": line.message, "line": number, "details": [],
    })
    values.update(fields)
    return values


_Fields = dict[str, object] | None
_Reader = Callable[[_Line, _Subject], _Fields]


def _sxid(line: _Line, subject: _Subject) -> _Fields:
    match = _SXID.search(line.message)
    if not match:
        return None
    rest = match.group("rest").strip()
    severity = re.match(r"(Non-fatal|Fatal)\b", rest, re.I)
    port = _LINK_NUMBER.search(rest)
    return {"type": "sxid", "code": int(match.group("code")), "pci": match.group("pci"),
            "source": "nvidia-nvswitch", "device": subject.name or match.group("pci"),
            "severity": severity.group(1) if severity else None,
            "port": int(port.group(1)) if port else None, "message": rest}


def _xid(line: _Line, subject: _Subject) -> _Fields:
    match = _XID.search(line.message)
    if not match:
        return None
    code = int(match.group("code"))
    rest = match.group("rest").strip()
    pid: int | None = None
    process: str | None = None
    with_pid = _XID_PID.match(rest)
    if with_pid:
        pid_text = with_pid.group("pid").strip("'\" ")
        pid = int(pid_text) if pid_text.isdigit() else None
        name = (with_pid.group("name") or "").strip("'\" ")
        process = name if name and name != "<unknown>" else None
        rest = with_pid.group("msg").strip()
    link = _LINK_NUMBER.search(rest) if _NVLINK.search(rest) else None
    return {"type": "gpu_fallen_off_bus" if code == 79 else "xid", "code": code,
            "pci": match.group("pci"), "device": match.group("pci"), "source": "NVRM",
            "pid": pid, "process": process, "message": rest,
            "port": int(link.group(1)) if link else None}


def _gpu_intro(line: _Line, subject: _Subject) -> _Fields:
    """`NVRM: The NVIDIA GPU <address> ...`: a GPU-level message whose first line carries the
    address (what it says may follow on the next lines); a fallen-off-bus one is that."""
    match = _GPU_INTRO.match(line.message)
    if not match:
        return None
    fallen = _FALLEN.search(line.message)
    return {"type": "gpu_fallen_off_bus" if fallen else "gpu_error", "pci": match.group("pci"),
            "device": match.group("pci"), "source": "NVRM",
            "message": line.message[len("NVRM: "):].strip()}


def _fallen(line: _Line, subject: _Subject) -> _Fields:
    if not _FALLEN.search(line.message):
        return None
    pci = _PCI_ANY.search(line.message)
    address = pci.group("pci") if pci else None
    return {"type": "gpu_fallen_off_bus", "pci": address, "device": address,
            "source": "NVRM" if "NVRM" in line.message else subject.driver or line.tag}


def _fabricmanager(line: _Line, subject: _Subject) -> _Fields:
    detected = _FM_ERROR.search(line.message)
    is_fm = (line.tag or "").startswith("nv-fabricmanager")
    if not detected and not (is_fm and _FM_WORDS.search(line.message)):
        return None
    pci = re.search(rf"pci bus id (?P<pci>{_PCI})", line.message, re.I)
    port = _PORT_NUMBER.search(line.message)
    code = detected.group("code") if detected else None
    return {"type": "fabricmanager", "code": int(code) if code else None,
            "severity": detected.group("sev") if detected else None,
            "pci": pci.group("pci") if pci else None,
            "device": pci.group("pci") if pci else None, "source": line.tag or "nv-fabricmanager",
            "port": int(port.group(1)) if port else None, "message": line.message}


def _downtrained(line: _Line, subject: _Subject) -> _Fields:
    if not _DOWNTRAINED.search(subject.msg):
        return None
    return {"type": "pcie_downtrained"}


def _aer(line: _Line, subject: _Subject) -> _Fields:
    if not _AER.search(subject.msg):
        return None
    severity = _AER_SEVERITY.search(subject.msg)
    source = _AER_SOURCE.search(subject.msg)
    sev = (severity.group("sev") or severity.group("sev2")).strip() if severity else None
    return {"type": "pcie_aer", "severity": sev,
            "device": source.group("pci") if source else subject.name or subject.pci}


def _hotplug(line: _Line, subject: _Subject) -> _Fields:
    match = _HOTPLUG.search(line.message)
    if not match:
        return None
    return {"type": "pcie_hotplug", "state": match.group("what").lower(),
            "device": subject.pci or match.group("slot")}


def _port_state(line: _Line, subject: _Subject) -> _Fields:
    match = _PORT_STATE.search(subject.msg)
    if not match:
        return None
    return {"type": "port_state", "device": match.group("dev") or subject.name,
            "port": int(match.group("port")), "state": match.group("state").upper()}


_BOND_STATES: list[tuple[str, str]] = [
    (r"enslav|adding slave", "enslaved"),
    (r"releas", "released"),
    (r"definitely down", "disabled"),
    (r"link status down|disabling it in", "down"),
    (r"definitely up|link status up|up again|enabling it", "up"),
    (r"new active|making interface", "active"),
    (r"now running without any active", "no_active"),
    (r"speed changed", "speed_changed"),
    (r"\bbackup\b", "backup"),
]


def _bond(line: _Line, subject: _Subject) -> _Fields:
    name, msg = subject.name, subject.msg
    if name == "bonding":
        inner = _NAMED.match(msg)
        if not inner:
            return None
        name, msg = inner.group("name"), inner.group("msg")
    if name is None or subject.pci is not None or not _BOND_NAME.match(name):
        return None
    slave_match = _SLAVE.match(msg)
    slave = slave_match.group("slave") if slave_match else None
    text = slave_match.group("rest") if slave_match else msg
    if slave is None:
        in_text = _SLAVE_IN_TEXT.search(text)
        slave = in_text.group("slave").rstrip(",") if in_text else None
    state = next((s for p, s in _BOND_STATES if re.search(p, text, re.I)), None)
    if state is None:
        return None
    return {"type": "bond_slave", "state": state, "bond": name, "interface": slave,
            "device": slave or name, "source": "bonding", "message": text.strip()}


def _link(line: _Line, subject: _Subject) -> _Fields:
    carrier = _CARRIER.match(subject.msg)
    if carrier and subject.name:
        down = carrier.group("what").lower() == "lost"
        return {"type": "link_down" if down else "link_up", "state": "down" if down else "up",
                "interface": subject.name, "device": subject.name}
    match = _LINK.match(subject.msg) or _NIC_LINK.search(subject.msg)
    if not match:
        return None
    ifname = match.group("ifname") or subject.name
    if ifname is None or subject.driver == "pcieport" or "(" in ifname:
        return None
    down = match.group("st").lower() == "down"
    fields: dict[str, object] = {"type": "link_down" if down else "link_up",
                                 "state": "down" if down else "up", "interface": ifname,
                                 "device": ifname}
    if match.group("ifname") and subject.name and not subject.driver:
        fields["source"] = subject.name  # `e1000e: eno1 NIC Link is Up`: the name is the driver
    return fields


def _module(line: _Line, subject: _Subject) -> _Fields:
    match = _MODULE.search(subject.msg)
    if not match:
        return None
    what = match.group("what").lower()
    state = "error" if match.group("err") or "error" in what else \
        "unplugged" if "unplugged" in what else "plugged" if "plugged" in what else None
    return {"type": "module_event", "state": state, "port": int(match.group("module"))}


def _ecc(line: _Line, subject: _Subject) -> _Fields:
    edac = _EDAC.match(line.message)
    if edac:
        return {"type": "ecc", "severity": edac.group("sev"), "device": edac.group("mc"),
                "source": "EDAC"}
    if "NVRM" not in line.message or not _ECC.search(line.message):
        return None
    pci = _PCI_ANY.search(subject.msg)
    return {"type": "ecc", "source": "NVRM", "pci": pci.group("pci") if pci else None,
            "device": pci.group("pci") if pci else None}


def _nvlink(line: _Line, subject: _Subject) -> _Fields:
    if not _NVLINK.search(line.message) or not _FAILURE.search(subject.msg):
        return None
    port = _LINK_NUMBER.search(subject.msg)
    fields: dict[str, object] = {"type": "nvlink_error",
                                 "port": int(port.group(1)) if port else None}
    pci = _PCI_ANY.search(subject.msg)
    if pci and subject.name is None:
        fields["pci"] = fields["device"] = pci.group("pci")
    return fields


def _mlx5_error(line: _Line, subject: _Subject) -> _Fields:
    watchdog = _WATCHDOG.search(line.message)
    if watchdog:
        if not watchdog.group("drv").startswith("mlx5"):
            return None
        return {"type": "mlx5_error", "source": watchdog.group("drv"),
                "device": watchdog.group("ifname"), "interface": watchdog.group("ifname")}
    mlx5 = (subject.driver or "").startswith("mlx5") or \
        (subject.driver == "infiniband" and (subject.name or "").startswith("mlx5"))
    if not mlx5 or not _MLX5_ERROR.search(subject.msg):
        return None
    return {"type": "mlx5_error"}


def _gpu_error(line: _Line, subject: _Subject) -> _Fields:
    if not line.message.startswith("NVRM") or not _FAILURE.search(subject.msg):
        return None
    pci = _PCI_ANY.search(subject.msg)
    return {"type": "gpu_error", "source": "NVRM", "pci": pci.group("pci") if pci else None,
            "device": pci.group("pci") if pci else None}


_READERS: tuple[_Reader, ...] = (
    _sxid, _xid, _gpu_intro, _fallen, _fabricmanager, _downtrained, _aer, _hotplug, _port_state,
    _bond, _link, _module, _ecc, _nvlink, _mlx5_error, _gpu_error)
"""What a line may report, tried in this order (the first that reads it wins)."""


def tables(result: KernelLog) -> list[Table]:
    """The events, then the summaries."""
    columns = [left("line"), right("time"), left("type"), left("device"), left("code"),
               left("state"), left("message")]
    rows = [(e.line, e.timestamp, e.type, e.device, e.code, e.state, e.message)
            for e in result.events]
    notes = [f"{name}: " + ", ".join(f"{k}={v}" for k, v in summary.items())
             for name, summary in (("xids", result.xids), ("sxids", result.sxids),
                                   ("link_flaps", result.link_flaps),
                                   ("port_downs", result.port_downs)) if summary]
    return [Table.build(columns, rows, notes=notes)]
