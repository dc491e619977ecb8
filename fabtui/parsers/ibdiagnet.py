"""`ibdiagnet` (ibutils2 2.x) standard output.

    Running version: "IBDIAGNET 2.7.0.MLNX20210617.4883fca",...
    ---------------------------------------------
    Port Counters
    -E- Ports counters Difference Check (during run) finished with errors
    -E- S0c42a10300838c6c/N0c42a10300838c74/P3 - "symbol_error_counter" increased during the
        run (difference value=27,difference allowed threshold=1)
    ---------------------------------------------
    Fabric Summary
    Total Nodes             : 42
    Master SM: Port=1 LID=10 GUID=0x98039b0300952b30 devid=4123 Priority:15 ...
    ---------------------------------------------
    Summary
    -I- Stage                     Warnings   Errors     Comment
    -I- Discovery                 3          0

The `Summary` table is the verdict ibdiagnet itself gives; a table row that does not read as
`stage, warnings, errors` is a warning, never a guessed number. Port-counter increases are
read into `port_errors`; other `-W-`/`-E-` lines are kept as messages under their stage.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.ibdiagnet import (
    IbdiagnetMessage,
    IbdiagnetOutput,
    IbdiagnetPortError,
    IbdiagnetStage,
)
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines

KIND = "ibdiagnet"
MODEL = IbdiagnetOutput
DESCRIPTION = "ibdiagnet: InfiniBand fabric sweep (stages, fabric summary, port-counter errors)"

_RULE = re.compile(r"^-{20,}\s*$")
_VERSION = re.compile(r'^Running version:\s*"(?P<v>[^"]+)"')
_STAGE_ROW = re.compile(r"^-I-\s+(?P<stage>\S.*?)\s{2,}(?P<w>\d+)\s+(?P<e>\d+)"
                        r"(?:\s+(?P<c>.*?))?\s*$")
_PORT_ERR = re.compile(r'^-E-\s+(?P<port>S(?P<sys>[0-9a-fA-F]+)/N(?P<node>[0-9a-fA-F]+)/P'
                       r'(?P<num>\d+)\S*)\s+-\s+"(?P<counter>\w+)"\s+increased during the run\s*'
                       r"\(difference value=(?P<diff>\d+)\s*,\s*difference allowed threshold="
                       r"(?P<thr>\d+)\)")
_SUMMARY = re.compile(r"^(?P<key>[A-Za-z][\w .]*?)\s*:\s*(?P<value>\S.*?)\s*$")
_SM = re.compile(r"^(?P<role>Master|Standby) SM\s*:\s*(?P<value>.*?)\s*$")


def detect(text: str) -> float:
    """How sure we are that `text` is ibdiagnet output (0..1)."""
    head = "\n".join(clean_lines(text[:60000]))
    score = 0.0
    if re.search(r'(?m)^Running version:\s*"IBDIAGNET', head):
        score += 0.5
    if re.search(r"(?m)^-I- Stage\s+Warnings\s+Errors", head):
        score += 0.45
    if re.search(r"(?m)^-[IWE]- (?:Discovering|Fabric Discover|Lids Check|Links Check)", head):
        score += 0.3
    return min(score, 0.95)


def parse(text: str) -> IbdiagnetOutput:
    """Parse one ibdiagnet run; raises `ParseError` when neither its summary nor its stages
    are there."""
    lines = clean_lines(text)
    warnings: list[str] = []
    version = None
    stage: str | None = None
    section: str | None = None
    stages: dict[str, IbdiagnetStage] = {}
    summary: dict[str, str] = {}
    speeds: dict[str, int] = {}
    sms: dict[str, str] = {}
    port_errors: list[IbdiagnetPortError] = []
    messages: list[IbdiagnetMessage] = []
    after_rule = False
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        if _RULE.match(line):
            after_rule = True
            continue
        if after_rule and line.strip():
            after_rule = False
            section = line.strip()
            stage = section
            continue
        if not line.strip():
            continue
        found = _VERSION.match(line)
        if found:
            version = found.group("v")
            continue
        if section == "Summary":
            if re.match(r"^-I-\s+Stage\s+Warnings\s+Errors", line):
                continue
            row = _STAGE_ROW.match(line)
            if row:
                stages[row.group("stage")] = IbdiagnetStage(
                    warnings=int(row.group("w")), errors=int(row.group("e")),
                    comment=(row.group("c") or "").strip())
            elif line.startswith("-I- Stage") or (line.startswith("-I-") and ":" not in line
                                                   and "detailed" not in line):
                warnings.append(f"line {number}: summary row not read: {line.strip()!r}")
            continue
        if section == "Fabric Summary":
            sm = _SM.match(line)
            if sm:
                sms[sm.group("role")] = sm.group("value")
                continue
            kv = _SUMMARY.match(line)
            if kv:
                key, value = kv.group("key").strip(), kv.group("value").strip()
                if key.startswith("Links at "):
                    speed = key.removeprefix("Links at ").strip()
                    if value.isdigit():
                        speeds[speed] = int(value)
                    else:
                        warnings.append(f"line {number}: {key}: not a number: {value!r}")
                else:
                    summary[key] = value
            continue
        err = _PORT_ERR.match(line)
        if err:
            port_errors.append(IbdiagnetPortError(
                port=err.group("port"), node_guid="0x" + err.group("node").lower(),
                port_number=int(err.group("num")), counter=err.group("counter"),
                difference=int(err.group("diff")), threshold=int(err.group("thr")),
                line=number))
            continue
        if line.startswith(("-W-", "-E-")):
            messages.append(IbdiagnetMessage(
                level="warning" if line.startswith("-W-") else "error", stage=stage,
                text=line[3:].strip(), line=number))
            if "increased during the run" in line:
                warnings.append(f"line {number}: a counter increase not read: "
                                f"{line.strip()[:120]!r}")
    if not stages and not summary and version is None:
        raise ParseError(KIND, None, "no ibdiagnet run found (no `Running version:`, fabric "
                         "summary or `Summary` table)")
    if not stages:
        warnings.append("no `Summary` table: the run was cut short or the output truncated")
    master = sms.get("Master")
    return IbdiagnetOutput(
        version=version, stages=stages, total_nodes=_int(summary, "Total Nodes", warnings),
        switches=_int(summary, "IB Switches", warnings),
        channel_adapters=_int(summary, "IB Channel Adapters", warnings),
        links=_int(summary, "Total number of links", warnings), links_by_speed=speeds,
        master_sm=master, master_sm_lid=_sm_lid(master),
        master_sm_description=_sm_field(master, "Node_Description"),
        standby_sm=sms.get("Standby"), port_errors=port_errors, messages=messages,
        warnings=warnings)


def _int(summary: dict[str, str], key: str, warnings: list[str]) -> int | None:
    value = summary.get(key)
    if value is None:
        return None
    if not value.isdigit():
        warnings.append(f"{key}: not a number: {value!r}")
        return None
    return int(value)


def _sm_lid(value: str | None) -> int | None:
    found = re.search(r"\bLID=(\d+)", value or "")
    return int(found.group(1)) if found else None


def _sm_field(value: str | None, name: str) -> str | None:
    found = re.search(rf"\b{name}=(.*)$", value or "")
    return found.group(1).strip() if found else None
