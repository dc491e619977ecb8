"""OpenSM's log (`/var/log/opensm.log`, `osm_log` layout)::

    Jun 17 17:21:28 922890 [4E8006C0] 0x01 -> log_trap_info: Received Generic Notice type:1
        num:128 (Link state change) Producer:2 (Switch) from LID:1 TID:0x0000000000000000
    Jun 17 17:21:28 924124 [3DA006C0] 0x02 -> do_sweep: Entering heavy sweep with flags: ...
    Jun 17 17:21:28 927893 [4F2006C0] 0x02 -> osm_pi_rcv_process: Switch 0x200000 Switch1
        port 3 changed state from ACTIVE to DOWN
    Jun 17 17:21:28 954937 [3DA006C0] 0x02 -> SUBNET UP

Recognised: `Entering MASTER|STANDBY state`, heavy sweeps, `SUBNET UP`, `Received Generic
Notice ... num:N` traps and port state changes. Every other line is kept out of the events;
a line that starts like a log line but whose stamp cannot be read is a warning.
"""

from __future__ import annotations

import re
from collections import Counter

from fabtui.model.parsed.opensm_log import OpensmEvent, OpensmLog
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "opensm-log"
MODEL = OpensmLog
DESCRIPTION = "OpenSM log: SM state (master/standby), heavy sweeps, SUBNET UP, traps, port states"

_LINE = re.compile(r"^(?P<stamp>[A-Z][a-z]{2} [ \d]\d (?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)) "
                   r"\d{6} \[[0-9A-Fa-f]+\] 0x[0-9A-Fa-f]{2} -> (?P<msg>.*)$")
_TRAP = re.compile(r"Received Generic Notice type:\d+ num:(?P<num>\d+) \(.*?\).*?from "
                   r"LID:(?P<lid>\d+)")
_PORT = re.compile(r"(?:Switch|CA|Router)?\s*(?P<guid>0x[0-9a-fA-F]+) (?P<node>.+?) port "
                   r"(?P<port>\d+) changed state from (?P<old>\w+) to (?P<new>\w+)")


def detect(text: str) -> float:
    """How sure we are that `text` is an OpenSM log (0..1)."""
    head = "\n".join(clean_lines(text[:30000]))
    hits = len(re.findall(r"(?m)^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{6} \[[0-9A-Fa-f]+\] "
                          r"0x[0-9A-Fa-f]{2} -> ", head))
    if hits and re.search(r"SUBNET UP|HEAVY SWEEP|Entering (?:MASTER|STANDBY) state|"
                          r"Generic Notice", head):
        return 0.95
    return 0.6 if hits >= 3 else 0.0


def parse(text: str) -> OpensmLog:
    """Parse an OpenSM log; raises `ParseError` when no OpenSM line is found."""
    events: list[OpensmEvent] = []
    warnings: list[str] = []
    seen = 0
    for number, raw in enumerate(clean_lines(text), start=1):
        line = raw.rstrip()
        found = _LINE.match(line)
        if not found:
            if re.match(r"^[A-Z][a-z]{2} [ \d]\d ", line) and " -> " in line:
                warnings.append(f"line {number}: not an OpenSM log line: {line[:80]!r}")
            continue
        seen += 1
        stamp, msg = found.group("stamp"), found.group("msg")
        seconds = int(found.group("h")) * 3600 + int(found.group("m")) * 60 + \
            int(found.group("s"))
        base = {"stamp": stamp, "seconds": seconds, "line": number}
        if "Entering MASTER state" in msg:
            events.append(OpensmEvent(type="master", **base))
        elif "Entering STANDBY state" in msg:
            events.append(OpensmEvent(type="standby", **base))
        elif "Entering heavy sweep" in msg:
            events.append(OpensmEvent(type="heavy_sweep", **base))
        elif msg.strip() == "SUBNET UP":
            events.append(OpensmEvent(type="subnet_up", **base))
        elif (trap := _TRAP.search(msg)) is not None:
            events.append(OpensmEvent(type="trap", trap=int(trap.group("num")),
                                      lid=int(trap.group("lid")), **base))
        elif (port := _PORT.search(msg)) is not None:
            events.append(OpensmEvent(type="port_state", guid=port.group("guid"),
                                      node=port.group("node"), port=int(port.group("port")),
                                      old_state=port.group("old"),
                                      new_state=port.group("new"), **base))
    if not seen:
        raise ParseError(KIND, None, "no OpenSM log line found (`Mon DD HH:MM:SS usec [thread] "
                         "0xNN -> `)")
    traps = Counter(str(e.trap) for e in events if e.type == "trap")
    return OpensmLog(events=events, masters=sum(e.type == "master" for e in events),
                     standbys=sum(e.type == "standby" for e in events),
                     heavy_sweeps=sum(e.type == "heavy_sweep" for e in events),
                     subnet_ups=sum(e.type == "subnet_up" for e in events),
                     traps=dict(traps), warnings=warnings)
