"""The default `nvidia-smi` table (no arguments), any driver generation.

    | NVIDIA-SMI 550.127.05    Driver Version: 550.127.05    CUDA Version: 12.4     |
    |=========================================+========================+==============|
    |   0  Tesla V100-SXM2-16GB           On  |   00000000:00:04.0 Off |            0 |
    | N/A   37C    P0             45W /  300W |       1MiB /  16384MiB |  0%  Default |
    |                                         |                        |          N/A |

Each GPU is a block of 2 lines (older drivers) or 3 (with the `MIG M.` line); cells are split at
`|` and read by shape, so column widths of any version work. The Processes table exists in an
old form (`GPU PID Type Process name Usage`) and a newer one with MIG `GI`/`CI` columns. The
MIG devices table (`GPU GI CI MIG | Memory-Usage / BAR1-Usage | SM Unc ECC | CE ENC DEC OFA
JPG`) is read row by row; its Shared engine names come from its own header.

From R610 the header says `KMD Version:` and `CUDA UMD Version:` where it said `Driver
Version:` and `CUDA Version:` (NVIDIA deprecated the old names); both are read into the same
fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fabtui.model.parsed.nvidia_smi import (
    NvidiaSmiTable,
    NvsmiTableGpu,
    NvsmiTableMigDevice,
    NvsmiTableProcess,
)
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed
from fabtui.parsers.text import clean_line_stream, split_lines

KIND = "nvidia-smi"
MODEL = NvidiaSmiTable
DESCRIPTION = "nvidia-smi (default table): per-GPU status blocks and processes"

_HEADER = re.compile(r"NVIDIA-SMI\s+(\S+)\s+(?:Driver|KMD) Version:\s*(\S+)"
                     r"(?:\s+CUDA(?: UMD)? Version:\s*(\S+))?")
_MIG_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
_SHARED_NAMES = ("CE", "ENC", "DEC", "OFA", "JPG")
_DATE = re.compile(r"^\s*\w{3} \w{3}\s+\d+ \d\d:\d\d:\d\d \d{4}\s*$")
_FIRST = re.compile(r"^\s*(\d+)\s+(.*?)\s+(On|Off|N/A|TCC|WDDM)\s*$")
_BUS = re.compile(r"^\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])"
                  r"(?:\s+(\S+))?\s*$")
_SECOND = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*/\s*(\S+)\s*$")
_MEMORY = re.compile(r"^\s*(\S+?)\s*/\s*(\S+?)\s*$")
_UTIL = re.compile(r"^\s*(\S+)\s+(.+?)\s*$")
_PROCESS_TYPES = re.compile(r"^(?:C|G|M|C\+G|M\+C|M\+G|M\+C\+G)$")
_NUMBER = re.compile(r"^([-+]?\d+(?:\.\d+)?)\s*(?:W|C|%|MiB|MB)?$")


def detect(text: str) -> float:
    """How sure we are that `text` is the default `nvidia-smi` table (0..1)."""
    head = text[:50000]
    if re.search(r"\|\s*NVIDIA-SMI\s+\d", head) and \
            ("Driver Version" in head or "KMD Version" in head):
        return 0.95
    if "Persistence-M" in head and "Bus-Id" in head:
        return 0.8
    if re.search(r"(?m)^\|\s+\d+\s+.*\|\s+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d",
                 head):
        return 0.5
    return 0.0


def _number(value: str) -> float | None:
    match = _NUMBER.match(value.strip())
    return float(match.group(1)) if match else None


def _integer(value: str) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _missing(value: str | None) -> str | None:
    if value is None or value.strip() in ("", "N/A", "ERR!", "[N/A]", "Unknown", "Not Found"):
        return None
    return value.strip()


class _Builder:
    """Collects the lines of one GPU block into its fields."""

    def __init__(self, index: int, name: str, persistence: str) -> None:
        self.fields: dict[str, object] = {
            "index": index, "name": name, "persistence_mode": _missing(persistence),
            "bus_id": None, "display_active": None, "volatile_uncorrectable_ecc": None,
            "fan_pct": None, "temperature_c": None, "perf_state": None, "power_draw_w": None,
            "power_cap_w": None, "memory_used_mib": None, "memory_total_mib": None,
            "utilization_pct": None, "compute_mode": None, "mig_mode": None}
        self.lines = 1

    def first(self, cells: list[str]) -> None:
        bus = _BUS.match(cells[1]) if len(cells) > 1 else None
        if bus:
            self.fields["bus_id"] = bus.group(1)
            self.fields["display_active"] = _missing(bus.group(2))
        if len(cells) > 2:
            self.fields["volatile_uncorrectable_ecc"] = _integer(cells[2])

    def second(self, match: re.Match[str], cells: list[str]) -> None:
        fan, temp, perf, usage, cap = match.groups()
        self.fields.update(fan_pct=_integer(fan), temperature_c=_integer(temp),
                           perf_state=_missing(perf), power_draw_w=_number(usage),
                           power_cap_w=_number(cap))
        memory = _MEMORY.match(cells[1]) if len(cells) > 1 else None
        if memory:
            self.fields.update(memory_used_mib=_integer(memory.group(1)),
                               memory_total_mib=_integer(memory.group(2)))
        util = _UTIL.match(cells[2]) if len(cells) > 2 else None
        if util:
            self.fields.update(utilization_pct=_integer(util.group(1)),
                               compute_mode=_missing(util.group(2)))
        self.lines = 2

    def third(self, cells: list[str]) -> None:
        self.fields["mig_mode"] = _missing(cells[-1])
        self.lines = 3

    def build(self) -> NvsmiTableGpu:
        return NvsmiTableGpu.model_validate(self.fields)


def _cells(line: str) -> list[str] | None:
    """The cells of a `| a | b | c |` line, or None for borders and other lines."""
    stripped = line.strip()
    if not stripped.startswith("|") or set(stripped) <= set("|=-+ "):
        return None
    return stripped.strip("|").split("|")


def _process(cells: list[str], with_instances: bool) -> NvsmiTableProcess | None:
    """One Processes row in the old (GPU PID Type Name Usage) or newer (GI/CI) layout."""
    tokens = " ".join(cells).split()
    if len(tokens) < 4 or not tokens[0].isdigit():
        return None
    if with_instances and len(tokens) >= 6 and tokens[3].isdigit():
        gi, ci, pid, kind, rest = tokens[1], tokens[2], tokens[3], tokens[4], tokens[5:]
    elif tokens[1].isdigit() and _PROCESS_TYPES.match(tokens[2]):
        gi, ci, pid, kind, rest = "N/A", "N/A", tokens[1], tokens[2], tokens[3:]
    else:
        return None
    memory = rest[-1] if rest and re.match(r"^(?:\d+MiB|N/A)$", rest[-1]) else None
    name = " ".join(rest[:-1] if memory is not None else rest)
    return NvsmiTableProcess(gpu=int(tokens[0]), gi_id=_missing(gi), ci_id=_missing(ci),
                             pid=int(pid), type=kind, process_name=name,
                             used_memory_mib=_integer(memory) if memory else None)


def _mig_device(cells: list[str], row: re.Match[str], shared_names: list[str],
                warnings: list[str], number: int) -> dict[str, object]:
    """The fields of the first line of one `MIG devices:` row."""
    gpu, gi, ci, dev = (int(g) for g in row.groups())
    memory = _MEMORY.match(cells[1]) if len(cells) > 1 else None
    sm_unc = cells[2].split() if len(cells) > 2 else []
    counts = cells[3].split() if len(cells) > 3 else []
    if len(sm_unc) != 2 or len(counts) != len(shared_names) or memory is None:
        warnings.append(f"line {number}: MIG device row with unexpected cells; values the "
                        "row does not give clearly are left null")
    shared = dict.fromkeys(shared_names)
    if len(counts) == len(shared_names):
        shared = {name: _integer(c) for name, c in zip(shared_names, counts, strict=True)}
    return {"gpu": gpu, "gi_id": gi, "ci_id": ci, "mig_device": dev,
            "memory_used_mib": _integer(memory.group(1)) if memory else None,
            "memory_total_mib": _integer(memory.group(2)) if memory else None,
            "bar1_used_mib": None, "bar1_total_mib": None,
            "sm_count": _integer(sm_unc[0]) if len(sm_unc) == 2 else None,
            "volatile_uncorrectable_ecc": _integer(sm_unc[1]) if len(sm_unc) == 2 else None,
            "shared": shared}


class _State:
    """Walks the lines: header, GPU blocks, MIG devices, processes."""

    def __init__(self) -> None:
        self.result: dict[str, str | None] = {"timestamp": None, "nvidia_smi_version": None,
                                              "driver_version": None, "cuda_version": None}
        self.gpus: list[_Builder] = []
        self.processes: list[NvsmiTableProcess] = []
        self.mig_devices: list[dict[str, object]] = []
        self.shared_names = list(_SHARED_NAMES)
        self.section = "preamble"
        self.with_instances = False
        self.warnings: list[str] = []

    def line(self, number: int, line: str) -> None:
        header = _HEADER.search(line)
        if header:
            self.result.update(nvidia_smi_version=header.group(1),
                               driver_version=header.group(2),
                               cuda_version=_missing(header.group(3)))
            self.section = "header"
            return
        if _DATE.match(line) and self.section == "preamble":
            self.result["timestamp"] = line.strip()
            return
        if "MIG devices:" in line:
            self.section = "mig-header"
        elif self.section == "mig-header" and re.search(r"\bCE\b", line):
            cells = _cells(line)
            if cells is not None:
                self.shared_names = cells[-1].split()
        elif "Processes:" in line:
            self.section = "processes-header"
        elif self.section == "processes-header" and re.search(r"\bGI\b", line):
            self.with_instances = True
        if line.strip().startswith("|=") or line.strip().startswith("+="):
            self.section = {"header": "gpus", "processes-header": "processes",
                            "mig-header": "mig"}.get(self.section, self.section)
            return
        cells = _cells(line)
        if cells is None:
            return
        if self.section == "gpus":
            self._gpu_line(number, cells)
        elif self.section == "processes":
            self._process_line(number, cells)
        elif self.section == "mig":
            self._mig_line(number, cells)

    def _mig_line(self, number: int, cells: list[str]) -> None:
        row = _MIG_ROW.match(cells[0])
        if row:
            self.mig_devices.append(
                _mig_device(cells, row, self.shared_names, self.warnings, number))
            return
        text = " ".join(cells).strip()
        bar1 = _MEMORY.match(cells[1]) if len(cells) > 1 and not cells[0].strip() else None
        if bar1 and self.mig_devices and self.mig_devices[-1]["bar1_total_mib"] is None:
            self.mig_devices[-1].update(bar1_used_mib=_integer(bar1.group(1)),
                                        bar1_total_mib=_integer(bar1.group(2)))
        elif text and not text.startswith("No MIG devices"):
            self.warnings.append(f"line {number}: unrecognised MIG devices line skipped")

    def _gpu_line(self, number: int, cells: list[str]) -> None:
        first = _FIRST.match(cells[0])
        if first and len(cells) >= 2 and _BUS.match(cells[1]):
            builder = _Builder(int(first.group(1)), first.group(2), first.group(3))
            builder.first(cells)
            self.gpus.append(builder)
            return
        current = self.gpus[-1] if self.gpus else None
        second = _SECOND.match(cells[0])
        if current is not None and current.lines == 1 and second:
            current.second(second, cells)
        elif (current is not None and current.lines == 2 and len(cells) >= 3
              and not "".join(cells[:-1]).strip()):
            current.third(cells)
        elif "".join(cells).strip():
            self.warnings.append(f"line {number}: unrecognised GPU table line skipped")

    def _process_line(self, number: int, cells: list[str]) -> None:
        text = " ".join(cells).strip()
        if not text or text.startswith("No running processes") or text.startswith("ID "):
            return
        process = _process(cells, self.with_instances)
        if process is None:
            self.warnings.append(f"line {number}: unrecognised process row: {text[:60]}")
        else:
            self.processes.append(process)


def parse(text: str) -> NvidiaSmiTable:
    """Parse the default `nvidia-smi` table; raises `ParseError` without a GPU block."""
    return parse_lines(split_lines(text)).head


def parse_lines(lines: Iterable[str]) -> Streamed[NvidiaSmiTable]:
    """Parse normalised lines (`fabtui parse` reads files this way, never holding them)."""
    state = _State()
    for number, line in enumerate(clean_line_stream(lines), start=1):
        if "NVIDIA-SMI has failed" in line or "No devices were found" in line \
                or "Failed to initialize NVML" in line:
            raise ParseError(KIND, number, line.strip()[:200])
        if "Unable to determine the device handle" in line:
            # A lost GPU (Xid 79, GPU has fallen off the bus) is left out of the table.
            state.warnings.append(f"line {number}: {line.strip()[:200]}")
        state.line(number, line)
    if not state.gpus:
        raise ParseError(KIND, None, "no GPU block (`| 0  <name>  On | <bus id> ... |`) found")
    return Streamed(NvidiaSmiTable(timestamp=state.result["timestamp"],
                                   nvidia_smi_version=state.result["nvidia_smi_version"],
                                   driver_version=state.result["driver_version"],
                                   cuda_version=state.result["cuda_version"],
                                   gpus=[g.build() for g in state.gpus],
                                   processes=state.processes,
                                   mig_devices=[NvsmiTableMigDevice.model_validate(d)
                                                for d in state.mig_devices],
                                   warnings=state.warnings))


def tables(result: NvidiaSmiTable) -> list[Table]:
    """One row per GPU, then the processes, then the MIG devices."""
    columns = [left("gpu"), left("name"), left("bus_id"), right("ecc_unc"), right("temp_c"),
               left("perf"), left("power_w"), left("memory_mib", "mem_used/total"),
               right("util_pct", "util%"), left("mig")]
    rows = [(g.index, g.name, g.bus_id, g.volatile_uncorrectable_ecc, g.temperature_c,
             g.perf_state, _pair(g.power_draw_w, g.power_cap_w),
             _pair(g.memory_used_mib, g.memory_total_mib), g.utilization_pct, g.mig_mode)
            for g in result.gpus]
    out = [Table.build(columns, rows,
                       title=[f"driver {result.driver_version}  cuda {result.cuda_version}"])]
    if result.processes:
        out.append(Table.build(
            [left("gpu"), left("pid"), left("type"), left("process"),
             right("used_memory_mib", "MiB")],
            [(p.gpu, p.pid, p.type, p.process_name, p.used_memory_mib)
             for p in result.processes]))
    if result.mig_devices:
        out.append(Table.build(
            [left("gpu"), right("gi"), right("ci"), right("mig_dev", "dev"),
             left("memory_mib", "mem_used/total"), right("sm"), right("ecc_unc")],
            [(m.gpu, m.gi_id, m.ci_id, m.mig_device,
              _pair(m.memory_used_mib, m.memory_total_mib), m.sm_count,
              m.volatile_uncorrectable_ecc) for m in result.mig_devices]))
    return out


def _pair(used: float | int | None, total: float | int | None) -> str:
    """`used/total` as nvidia-smi prints it, `-` for a value it did not print."""
    return "/".join("-" if v is None else str(v) for v in (used, total))
