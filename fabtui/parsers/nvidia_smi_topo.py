"""`nvidia-smi topo -m` (`topo --matrix`) and `nvidia-smi topo -p2p <r|w|n|a|p>`.

Newer drivers (tab-separated; shown here with spaces):

            GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
    GPU0     X      NV18    PIX     0-55,112-167    0               N/A
    NIC0    PIX     NODE     X
    Legend: ...
    NIC Legend:
      NIC0: mlx5_0

Older drivers name the NICs inline (`mlx5_0` as row/column headers), print `SOC` instead of
`SYS` and have no NUMA column. Cells are tab- or space-separated and tab-separated headers do
not line up with the cells, so rows are read by whitespace tokens: the row name, one code per
matrix column, then the affinity values in header order. The P2P form (`-p2p r`) is the same
matrix with `OK`/`NS`/`CNS`/... codes and its own legend.

An empty affinity cell leaves no token and nvidia-smi's tabs do not line values up with the
header (GB200 rows show it), so a GPU row with fewer affinity values than columns is read as
ambiguous: a warning and nulls, never a NUMA node under CPU Affinity. A value whose shape does
not fit its column (a CPU list, a NUMA id) is warned about and left null too. NIC rows print
no affinity values at all; that is no warning.
"""

from __future__ import annotations

import re

from fabtui.model.parsed.nvidia_smi_topo import NvidiaSmiTopo, TopoGpuNicAffinity
from fabtui.model.table import Table, left
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import clean_lines, is_missing

KIND = "nvidia-smi-topo"
MODEL = NvidiaSmiTopo
DESCRIPTION = "nvidia-smi topo -m / --matrix / -p2p r|w|n|a|p: GPU/NIC connection matrix"

_CODE = re.compile(r"^(?:X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC|OK|NS|CNS|GNS|TNS|U|C2C)$")
# Any short upper-case code counts as a cell, so a code this parser does not know yet (a new
# driver's legend) does not shift the affinity columns; device names are not cells.
_CELL = re.compile(r"^(?!(?:GPU|NIC)\d+$)(?:X|[A-Z][A-Z0-9#]{1,5})$")
_GPU = re.compile(r"^GPU\d+$")
_LEGEND_ROW = re.compile(r"^\s*(\S+)\s+=\s+(.*\S)\s*$")
_NIC_LEGEND_ROW = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
_P2P_COMMAND = re.compile(r"topo\s+(?:-p2p|--p2pstatus)[\s=]*([rwnap])\b")
_P2P_TYPES = {"r": "p2p_read", "w": "p2p_write", "n": "p2p_nvlink", "a": "p2p_atomics",
              "p": "p2p_pcie"}
_P2P_CODES = frozenset({"X", "OK", "NS", "CNS", "GNS", "TNS", "U"})
_EXTRA_PHRASES = (("CPU", "Affinity"), ("NUMA", "Affinity"), ("GPU", "NUMA", "ID"))
_CPU_LIST = re.compile(r"^\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*$")
_EXTRA_SHAPE = {"CPU Affinity": _CPU_LIST, "NUMA Affinity": _CPU_LIST,
                "GPU NUMA ID": re.compile(r"^\d+$")}
"""What a value of each affinity column looks like (besides N/A): a value that is not is a
shifted cell, never stored under the wrong column."""
_ANY = re.compile(r"")
_RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4, "SOC": 4}
_FENCE = re.compile(r"^\s*(?:```|~~~)")
# A launcher prefix (mpirun --tag-output, srun -l, pdsh) or markdown quote before a line.
_LEAD = r"(?m)^(?:\[\d+,\d+\]<std(?:out|err)>:|\s*\d+:[ \t]|[A-Za-z][\w.-]*:[ \t])?[ \t>]*"


def detect(text: str) -> float:
    """How sure we are that `text` is `nvidia-smi topo` output (0..1)."""
    head = text[:50000]
    score = 0.0
    if re.search(_LEAD + r"GPU0[ \t]+(?:GPU1|CPU Affinity|NIC0|[a-z]+\d*_\d+)\b", head):
        score += 0.3
    if re.search(_LEAD + r"GPU0[ \t]+X[ \t]", head):
        score += 0.3
    if re.search(_LEAD + r"X\s+=\s+Self\s*$", head):
        score += 0.3
    if "nvidia-smi topo" in head:
        score += 0.2
    if "NIC Legend:" in head:
        score += 0.1
    return min(score, 0.95)


def _clean_lines(text: str) -> list[str]:
    """Cleaned lines (`text.clean_lines`) with code-fence lines blanked, so the matrix reads the
    same however it was captured."""
    return ["" if _FENCE.match(line) else line for line in clean_lines(text)]


def _is_header(tokens: list[str]) -> bool:
    """A header line starts with GPU0 (no row label) and its second token is not a cell code."""
    return bool(tokens) and _GPU.match(tokens[0]) is not None and (
        len(tokens) == 1 or _CODE.match(tokens[1]) is None)


def _split_header(tokens: list[str]) -> tuple[list[str], list[str]]:
    """Matrix columns, then the trailing affinity columns (multi-word names joined)."""
    columns: list[str] = []
    extras: list[str] = []
    i = 0
    while i < len(tokens):
        phrase = next((p for p in _EXTRA_PHRASES if tuple(tokens[i:i + len(p)]) == p), None)
        if phrase is not None:
            extras.append(" ".join(phrase))
            i += len(phrase)
        elif extras:
            extras[-1] += " " + tokens[i]
            i += 1
        else:
            columns.append(tokens[i])
            i += 1
    return columns, extras


def _matrix_type(lines: list[str], cells: list[str], legend: dict[str, str]) -> str:
    """From the command line when captured, else from the codes in the matrix and legend."""
    for line in lines:
        match = _P2P_COMMAND.search(line)
        if match:
            return _P2P_TYPES[match.group(1)]
        if re.search(r"topo\s+(?:-m|--matrix)", line):
            return "topology"
    if "OK" in legend or (cells and all(c in _P2P_CODES for c in cells)):
        return "p2p"
    return "topology"


def _closest_nics(topo: NvidiaSmiTopo) -> dict[str, TopoGpuNicAffinity]:
    """For each GPU, the NIC(s) with the best-ranked PCIe path (PIX < PXB < ... < SYS)."""
    gpus = [d for d in topo.devices if _GPU.match(d)]
    nics = [c for c in dict.fromkeys(topo.columns + topo.devices) if not _GPU.match(c)]
    result: dict[str, TopoGpuNicAffinity] = {}
    for gpu in gpus:
        ranked: list[tuple[int, str, str]] = []
        for nic in nics:
            code = topo.matrix.get(gpu, {}).get(nic) or topo.matrix.get(nic, {}).get(gpu)
            if code in _RANK:
                ranked.append((_RANK[code], nic, code))
        if not ranked:
            continue
        best = min(r[0] for r in ranked)
        chosen = [r for r in ranked if r[0] == best]
        result[gpu] = TopoGpuNicAffinity(
            nics=[r[1] for r in chosen],
            nic_devices=[topo.nic_legend.get(r[1], r[1]) for r in chosen],
            connection=chosen[0][2])
    return result


def _read_legends(lines: list[str], start: int) -> tuple[dict[str, str], dict[str, str]]:
    """The code legend (`PIX = ...`) and the NIC legend (`NIC0: mlx5_0`) after the matrix."""
    legend: dict[str, str] = {}
    nic_legend: dict[str, str] = {}
    in_legend = False
    last: str | None = None  # the entry a wrapped line continues
    for line in lines[start:]:
        stripped = line.strip()
        if stripped.startswith("NIC Legend"):
            in_legend, last = False, None
            continue
        if stripped.startswith("Legend"):
            in_legend, last = True, None
            continue
        nic = _NIC_LEGEND_ROW.match(line)
        if nic:
            nic_legend[nic.group(1)] = nic.group(2)
            continue
        entry = _LEGEND_ROW.match(line)
        if in_legend and entry:
            legend[entry.group(1)] = entry.group(2)
            last = entry.group(1)
        elif in_legend and last is not None and stripped and stripped[0].isalpha() \
                and "GPU0" not in stripped:
            # An entry a terminal or page wrapped (`... interconnect between` / `NUMA nodes
            # (e.g., QPI/UPI)`): the rest of its text.
            legend[last] = f"{legend[last]} {stripped}"
        else:
            last = None
    return legend, nic_legend


class _Rows:
    """Accumulates matrix rows and their affinity columns."""

    def __init__(self, columns: list[str], extras: list[str]) -> None:
        self.columns = columns
        self.extras = extras
        self.devices: list[str] = []
        self.matrix: dict[str, dict[str, str]] = {}
        self.values: dict[str, dict[str, str | None]] = {name: {} for name in extras}
        self.warnings: list[str] = []

    def add(self, number: int, tokens: list[str]) -> None:
        name, rest = tokens[0], tokens[1:]
        count = 0
        while count < min(len(rest), len(self.columns)) and _CELL.match(rest[count]):
            count += 1
        if count < len(self.columns):
            self.warnings.append(f"line {number}: row {name} has {count} of "
                                 f"{len(self.columns)} matrix cells")
        self.devices.append(name)
        self.matrix[name] = dict(zip(self.columns, rest[:count], strict=False))
        trailing = rest[count:]
        if len(trailing) > len(self.extras):
            self.warnings.append(f"line {number}: row {name} has more values than columns")
        if trailing and len(trailing) < len(self.extras):
            # An empty cell (no CPU affinity, say) leaves no token: which column is missing
            # cannot be told, so none of the row's values is trusted.
            self.warnings.append(
                f"line {number}: row {name} has {len(trailing)} of {len(self.extras)} values "
                f"for {', '.join(self.extras)}; an empty cell makes them ambiguous, left null")
            trailing = [""] * len(self.extras)
        for column, value in zip(self.extras, trailing, strict=False):
            if is_missing(value):
                self.values[column][name] = None
            elif not _EXTRA_SHAPE.get(column, _ANY).match(value):
                self.warnings.append(f"line {number}: row {name}: {column} {value!r} is not "
                                     "what that column holds; left null")
                self.values[column][name] = None
            else:
                self.values[column][name] = value


def _is_row(tokens: list[str], known: set[str]) -> bool:
    """A matrix row: a device name followed by at least one cell code."""
    return len(tokens) >= 2 and (tokens[0] in known or _CELL.match(tokens[1]) is not None) \
        and _CELL.match(tokens[0]) is None and not tokens[0].endswith(":")


def parse(text: str) -> NvidiaSmiTopo:
    """Parse `nvidia-smi topo -m` / `-p2p` output; raises `ParseError` without a matrix."""
    lines = _clean_lines(text)
    header = next((i for i, line in enumerate(lines) if _is_header(line.split())), None)
    if header is None:
        raise ParseError(KIND, None, "no topology matrix header (a line of GPU0 GPU1 ... "
                                     "columns) found")
    columns, extras = _split_header(lines[header].split())
    rows = _Rows(columns, extras)
    end = header + 1
    for end in range(header + 1, len(lines)):
        tokens = lines[end].split()
        if not tokens:
            if rows.devices:
                break
            continue
        if _is_row(tokens, set(columns)):
            rows.add(end + 1, tokens)
        elif tokens[0].startswith("Legend"):
            break
        else:
            rows.warnings.append(f"line {end + 1}: not a matrix row: {lines[end].strip()[:60]}")
    if not rows.devices:
        raise ParseError(KIND, header + 2, "matrix header without any device row")
    rowless = [c for c in columns if c not in rows.matrix]
    if rowless:
        # nvidia-smi prints a row for every column (GPUs and NICs): the capture stops early.
        rows.warnings.append(f"column(s) {', '.join(rowless)} have no row: the capture ends "
                             "before them; their own links and affinities are not known")
    legend, nic_legend = _read_legends(lines, end)
    cells = [code for row in rows.matrix.values() for code in row.values()]
    topo = NvidiaSmiTopo(
        matrix_type=_matrix_type(lines, cells, legend), devices=rows.devices, columns=columns,
        matrix=rows.matrix, cpu_affinity=rows.values.get("CPU Affinity", {}),
        numa_affinity=rows.values.get("NUMA Affinity", {}),
        gpu_numa_id=rows.values.get("GPU NUMA ID", {}), nic_legend=nic_legend, legend=legend,
        gpu_nic_affinity={}, warnings=rows.warnings)
    if topo.matrix_type == "topology":
        topo.gpu_nic_affinity = _closest_nics(topo)
    return topo


def tables(result: NvidiaSmiTopo) -> list[Table]:
    """The matrix, then each GPU's closest NICs."""
    columns = [left("device", ""), *(left(c) for c in result.columns),
               left("cpu_affinity", "CPU Affinity"), left("numa_affinity", "NUMA")]
    rows = [(d, *(result.matrix[d].get(c) for c in result.columns), result.cpu_affinity.get(d),
             result.numa_affinity.get(d)) for d in result.devices]
    out = [Table.build(columns, rows)]
    if result.gpu_nic_affinity:
        out.append(Table.build(
            [left("gpu"), left("nics", "closest NICs"), left("connection")],
            [(gpu, ", ".join(aff.nic_devices), aff.connection)
             for gpu, aff in result.gpu_nic_affinity.items()]))
    return out
