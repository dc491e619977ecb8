"""`nvidia-smi -q` (text) and `nvidia-smi -q -x` (XML), any driver generation.

Both forms are read into the same tree of named nodes (XML elements, or indented `Key : Value`
lines and section headers), with names normalised to lower_snake_case. Fields are then taken by
path, trying the XML name and the text name of each driver generation in turn, e.g. PCIe
generation is `pci/pci_gpu_link_info/pcie_gen/current_link_gen` in XML and
`PCI/GPU Link Info/PCIe Generation/Current` in text.

ECC totals: old schemas count `Single Bit`/`Double Bit` per memory type with a `Total`; Ampere
and newer count SRAM/DRAM correctable/uncorrectable (550+ splits SRAM uncorrectable into parity
and SEC-DED). The `Total` is used where printed, otherwise the counters are summed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain, islice

from fabtui.model.parsed.nvidia_smi_q import NvidiaSmiQuery, NvsmiQueryGpu
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import Streamed
from fabtui.parsers.text import clean_line_stream, split_lines

KIND = "nvidia-smi-q"
MODEL = NvidiaSmiQuery
DESCRIPTION = "nvidia-smi -q (text) / nvidia-smi -q -x (XML): per-GPU health, ECC, PCIe, clocks"

_BANNER = re.compile(r"=+\s*NVSMI LOG\s*=+")
_GPU_HEADER = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])$")
_KEY_VALUE = re.compile(r"^(\S.*?)\s+:(?:\s+(.*))?$")
_KEY_VALUE_TIGHT = re.compile(r"^([A-Za-z][^:]*?):\s+(.*)$")
_NUMBER = re.compile(r"^([-+]?\d[\d,]*(?:\.\d+)?)\s*(?:[A-Za-z%/()]+(?:\s*\([^)]*\))?)?$")
_MISSING = frozenset({"", "n/a", "[n/a]", "na", "unknown error", "[unknown error]", "unknown",
                      "not supported", "[not supported]", "insufficient permissions",
                      "[insufficient permissions]", "requested functionality has been deprecated",
                      "not available", "-", "not found"})
_REASON_ALIASES = {"idle": "gpu_idle", "display_clock_setting": "display_clocks_setting"}


@dataclass
class _Node:
    """One element (XML) or one key / section (text), with a normalised name."""

    name: str
    value: str | None = None
    children: list[_Node] = field(default_factory=list)

    def child(self, name: str) -> _Node | None:
        """The first child called `name`."""
        return next((c for c in self.children if c.name == name), None)

    def find(self, path: str) -> _Node | None:
        """The node at a `/`-separated path below this one."""
        node: _Node | None = self
        for part in path.split("/"):
            node = node.child(part) if node is not None else None
        return node


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def detect(text: str) -> float:
    """How sure we are that `text` is `nvidia-smi -q` text or XML output (0..1)."""
    head = text[:50000]
    if _BANNER.search(head) or "<nvidia_smi_log" in head:
        return 0.95
    keys = len(re.findall(r"(?m)^\s+(?:Product Name|GPU UUID|Bus Id|Persistence Mode|"
                          r"Performance State)\s+:", head))
    if re.search(r"(?m)^\s*GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d\s*$", head):
        return 0.8 if keys >= 2 else 0.4
    return 0.6 if keys >= 3 else 0.0


def _clean(value: str | None) -> str | None:
    """The value, or None for the ways nvidia-smi says "no value"."""
    if value is None:
        return None
    value = value.strip()
    return None if value.lower() in _MISSING else value


class _Reader:
    """Typed look-ups on a GPU node, with warnings for values that are not what they claim."""

    def __init__(self, node: _Node, label: str, warnings: list[str]) -> None:
        self.node = node
        self.label = label
        self.warnings = warnings

    def raw(self, *paths: str) -> str | None:
        for path in paths:
            found = self.node.find(path)
            if found is not None and _clean(found.value) is not None:
                return _clean(found.value)
        return None

    def text(self, *paths: str) -> str | None:
        return self.raw(*paths)

    def number(self, *paths: str) -> float | None:
        value = self.raw(*paths)
        if value is None:
            return None
        match = _NUMBER.match(value)
        if not match:
            self.warnings.append(f"{self.label}: {paths[0]}: not a number: {value[:40]}")
            return None
        return float(match.group(1).replace(",", ""))

    def integer(self, *paths: str) -> int | None:
        number = self.number(*paths)
        return int(number) if number is not None else None

    def flag(self, *paths: str) -> bool | None:
        value = self.raw(*paths)
        if value is None:
            return None
        return {"yes": True, "no": False, "true": True, "false": False}.get(value.lower())


def _int_or_none(value: str | None) -> int | None:
    value = _clean(value)
    match = _NUMBER.match(value) if value is not None else None
    return int(float(match.group(1).replace(",", ""))) if match else None


def _sum(values: list[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _bit_total(node: _Node | None) -> int | None:
    """`Single Bit` / `Double Bit` block: its `Total`, else the sum of its counters."""
    if node is None:
        return None
    total = node.child("total")
    if total is not None and _int_or_none(total.value) is not None:
        return _int_or_none(total.value)
    return _sum([_int_or_none(c.value) for c in node.children if c.name != "total"])


def _ecc(node: _Node | None) -> tuple[int | None, int | None]:
    """(correctable, uncorrectable) totals of a `Volatile` or `Aggregate` ECC block."""
    if node is None:
        return None, None
    single, double = node.child("single_bit"), node.child("double_bit")
    if single is not None or double is not None:
        return _bit_total(single), _bit_total(double)
    correctable = [_int_or_none(c.value) for c in node.children
                   if "correctable" in c.name and "uncorrectable" not in c.name]
    uncorrectable = [_int_or_none(c.value) for c in node.children if "uncorrectable" in c.name]
    return _sum(correctable), _sum(uncorrectable)


def _sram(node: _Node | None) -> tuple[int | None, int | None]:
    """(SRAM correctable, SRAM uncorrectable) of a `Volatile` or `Aggregate` ECC block: the
    `sram_uncorrectable` counter, or the sum of its 550+ split (Parity, SEC-DED)."""
    if node is None:
        return None, None
    correctable = [_int_or_none(c.value) for c in node.children if c.name == "sram_correctable"]
    uncorrectable = [_int_or_none(c.value) for c in node.children
                     if c.name.startswith("sram_uncorrectable")]
    return _sum(correctable), _sum(uncorrectable)


def _event_reasons(gpu: _Node) -> list[str]:
    """Names of the clock event (throttle) reasons printed as `Active`."""
    block = gpu.child("clocks_event_reasons") or gpu.child("clocks_throttle_reasons")
    if block is None:
        return []
    active: list[str] = []
    stack = list(block.children)
    while stack:
        node = stack.pop(0)
        stack[:0] = node.children
        if (node.value or "").strip().lower() == "active":
            name = re.sub(r"^clocks_(?:event|throttle)_reasons?_", "", node.name)
            active.append(_REASON_ALIASES.get(name, name))
    return active


def _mig_devices(gpu: _Node) -> int | None:
    block = gpu.child("mig_devices")
    if block is None:
        return None
    return sum(1 for c in block.children if c.name == "mig_device")


def _gpu(node: _Node, warnings: list[str]) -> NvsmiQueryGpu:
    """One GPU block, reading the XML and the text names of each field."""
    bus_id = _clean(node.value) or _Reader(node, "", warnings).raw("pci/pci_bus_id", "pci/bus_id")
    r = _Reader(node, f"GPU {bus_id}", warnings)
    link = ("pci/pci_gpu_link_info/pcie_gen/", "pci/gpu_link_info/pcie_generation/")
    width = ("pci/pci_gpu_link_info/link_widths/", "pci/gpu_link_info/link_width/")
    volatile = _ecc(node.find("ecc_errors/volatile"))
    aggregate = _ecc(node.find("ecc_errors/aggregate"))
    sram_volatile = _sram(node.find("ecc_errors/volatile"))
    sram_aggregate = _sram(node.find("ecc_errors/aggregate"))
    return NvsmiQueryGpu(
        pci_bus_id=bus_id, product_name=r.text("product_name"),
        product_architecture=r.text("product_architecture"),
        uuid=r.text("uuid", "gpu_uuid"), serial=r.text("serial", "serial_number"),
        minor_number=r.integer("minor_number"), vbios_version=r.text("vbios_version"),
        persistence_mode=r.text("persistence_mode"),
        mig_mode=r.text("mig_mode/current_mig", "mig_mode/current"),
        mig_mode_pending=r.text("mig_mode/pending_mig", "mig_mode/pending"),
        mig_devices=_mig_devices(node), compute_mode=r.text("compute_mode"),
        performance_state=r.text("performance_state"), fan_speed_pct=r.integer("fan_speed"),
        pcie_gen_current=r.integer(link[0] + "current_link_gen", link[1] + "current"),
        pcie_gen_max=r.integer(link[0] + "max_link_gen", link[1] + "max"),
        pcie_gen_device_max=r.integer(link[0] + "max_device_link_gen", link[1] + "device_max"),
        pcie_gen_host_max=r.integer(link[0] + "max_host_link_gen", link[1] + "host_max"),
        pcie_width_current=r.integer(width[0] + "current_link_width", width[1] + "current"),
        pcie_width_max=r.integer(width[0] + "max_link_width", width[1] + "max"),
        replay_counter=r.integer("pci/replay_counter", "pci/replays_since_reset"),
        replay_rollover_counter=r.integer("pci/replay_rollover_counter",
                                          "pci/replay_number_rollovers"),
        ecc_mode=r.text("ecc_mode/current_ecc", "ecc_mode/current"),
        ecc_volatile_correctable_total=volatile[0], ecc_volatile_uncorrectable_total=volatile[1],
        ecc_aggregate_correctable_total=aggregate[0],
        ecc_aggregate_uncorrectable_total=aggregate[1],
        ecc_volatile_sram_correctable=sram_volatile[0],
        ecc_volatile_sram_uncorrectable=sram_volatile[1],
        ecc_aggregate_sram_correctable=sram_aggregate[0],
        ecc_aggregate_sram_uncorrectable=sram_aggregate[1],
        sram_threshold_exceeded=r.flag("ecc_errors/aggregate/sram_threshold_exceeded"),
        retired_pages_correctable=r.integer(
            "retired_pages/multiple_single_bit_retirement/retired_count",
            "retired_pages/single_bit_ecc"),
        retired_pages_uncorrectable=r.integer("retired_pages/double_bit_retirement/retired_count",
                                              "retired_pages/double_bit_ecc"),
        retired_pages_pending=r.flag(
            "retired_pages/pending_retirement", "retired_pages/pending_blacklist",
            "retired_pages/pending_page_retirement", "retired_pages/pending_page_blacklist",
            "retired_pages/pending"),
        remapped_rows_correctable=r.integer("remapped_rows/remapped_row_corr",
                                            "remapped_rows/correctable_error"),
        remapped_rows_uncorrectable=r.integer("remapped_rows/remapped_row_unc",
                                              "remapped_rows/uncorrectable_error"),
        remapped_rows_pending=r.flag("remapped_rows/remapped_row_pending",
                                     "remapped_rows/pending"),
        remapped_rows_failure=r.flag("remapped_rows/remapped_row_failure",
                                     "remapped_rows/remapping_failure_occurred"),
        temperature_c=r.integer("temperature/gpu_temp", "temperature/gpu_current_temp"),
        memory_temperature_c=r.integer("temperature/memory_temp",
                                       "temperature/memory_current_temp"),
        temperature_shutdown_c=r.integer("temperature/gpu_temp_max_threshold",
                                         "temperature/gpu_shutdown_temp"),
        temperature_slowdown_c=r.integer("temperature/gpu_temp_slow_threshold",
                                         "temperature/gpu_slowdown_temp"),
        temperature_max_operating_c=r.integer("temperature/gpu_temp_max_gpu_threshold",
                                              "temperature/gpu_max_operating_temp"),
        memory_temperature_max_c=r.integer("temperature/gpu_temp_max_mem_threshold",
                                           "temperature/memory_max_operating_temp"),
        power_draw_w=r.number(
            "gpu_power_readings/power_draw", "gpu_power_readings/instant_power_draw",
            "gpu_power_readings/instantaneous_power_draw",
            "gpu_power_readings/average_power_draw", "power_readings/power_draw"),
        power_limit_w=r.number(
            "gpu_power_readings/current_power_limit", "power_readings/enforced_power_limit",
            "gpu_power_readings/enforced_power_limit", "power_readings/power_limit"),
        clock_graphics_mhz=r.integer("clocks/graphics_clock", "clocks/graphics"),
        clock_sm_mhz=r.integer("clocks/sm_clock", "clocks/sm"),
        clock_mem_mhz=r.integer("clocks/mem_clock", "clocks/memory"),
        clock_graphics_max_mhz=r.integer("max_clocks/graphics_clock", "max_clocks/graphics"),
        clock_sm_max_mhz=r.integer("max_clocks/sm_clock", "max_clocks/sm"),
        clock_mem_max_mhz=r.integer("max_clocks/mem_clock", "max_clocks/memory"),
        clocks_event_reasons=_event_reasons(node),
        fabric_state=r.text("fabric/state"), fabric_status=r.text("fabric/status"),
        fabric_clique_id=r.text("fabric/cliqueid"),
        fabric_cluster_uuid=r.text("fabric/clusteruuid"),
        utilization_gpu_pct=r.integer("utilization/gpu_util", "utilization/gpu"),
        utilization_memory_pct=r.integer("utilization/memory_util", "utilization/memory"),
        memory_used_mib=r.integer("fb_memory_usage/used"),
        memory_total_mib=r.integer("fb_memory_usage/total"),
        gpu_reset_required=r.flag("gpu_reset_status/reset_required"))


def _xml_tree(element: ET.Element) -> _Node:
    node = _Node(_norm(element.tag), (element.text or "").strip() or element.get("id"))
    node.children = [_xml_tree(child) for child in element]
    return node


def _parse_xml(lines: list[str]) -> _Node:
    """The `<nvidia_smi_log>` document; the XML parser's error position becomes the line."""
    start = next(i for i, line in enumerate(lines) if "<?xml" in line or "<nvidia_smi_log" in line)
    end = next((i for i in range(len(lines) - 1, start - 1, -1)
                if "</nvidia_smi_log>" in lines[i]), len(lines) - 1)
    body = "\n".join(lines[start:end + 1])
    body = body[body.find("<"):]
    if "</nvidia_smi_log>" in body:
        body = body[:body.rfind("</nvidia_smi_log>") + len("</nvidia_smi_log>")]
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        line = start + exc.position[0]
        raise ParseError(KIND, line, f"XML is not well formed: {exc}") from None
    return _xml_tree(root)


def _text_tree(lines: Iterable[str], finished: Callable[[_Node], bool]) -> _Node:
    """Indented `Key : Value` lines and section headers as a tree; each top-level section is
    given to `finished` once read, and dropped from the tree when it returns True (a GPU block
    read into its model: a capture of many GPUs never holds a node per line)."""
    root = _Node("")
    stack: list[tuple[int, _Node]] = [(-1, root)]
    for raw in lines:
        line = raw.expandtabs(4).rstrip()
        stripped = line.strip()
        if not stripped or _BANNER.search(stripped):
            continue
        indent = len(line) - len(line.lstrip())
        gpu = _GPU_HEADER.match(stripped)
        pair = _KEY_VALUE.match(stripped) or _KEY_VALUE_TIGHT.match(stripped)
        if gpu:
            node = _Node("gpu", gpu.group(1))
        elif pair:
            node = _Node(_norm(pair.group(1)), (pair.group(2) or "").strip())
        else:
            node = _Node(_norm(stripped))
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if parent is root and root.children and finished(root.children[-1]):
            root.children.pop()
        parent.children.append(node)
        stack.append((indent, node))
    if root.children and finished(root.children[-1]):
        root.children.pop()
    return root


def parse(text: str) -> NvidiaSmiQuery:
    """Parse `nvidia-smi -q` text or XML; raises `ParseError` when neither is there."""
    return parse_lines(split_lines(text)).head


def parse_lines(normalised: Iterable[str]) -> Streamed[NvidiaSmiQuery]:
    """Parse normalised lines (`fabtui parse` reads files this way): text is read GPU block by
    GPU block, XML (one document) is read whole."""
    cleaned = clean_line_stream(normalised)
    first = list(islice(cleaned, 200))
    is_xml = any("<nvidia_smi_log" in line for line in first)
    gpus: list[NvsmiQueryGpu] = []
    gpu_warnings: list[str] = []  # after the header's, as when the header is read first

    def finished(node: _Node) -> bool:
        if node.name != "gpu":
            return False
        gpus.append(_gpu(node, gpu_warnings))
        return True

    if is_xml:
        root = _parse_xml([*first, *cleaned])
        if root.name != "nvidia_smi_log":
            raise ParseError(KIND, None, "the XML document is not an <nvidia_smi_log>")
        root.children = [c for c in root.children if not finished(c)]
    else:
        root = _text_tree(chain(first, cleaned), finished)
    # R610 renamed `Driver Version` / `CUDA Version` to `KMD Version` / `CUDA UMD Version`.
    driver_node = root.child("driver_version") or root.child("kmd_version")
    driver = _clean(driver_node.value) if driver_node is not None else None
    if not gpus and driver is None:
        raise ParseError(KIND, None, "no `Driver Version` and no GPU block: not nvidia-smi -q")
    warnings: list[str] = []
    top = _Reader(root, "header", warnings)
    head = NvidiaSmiQuery(
        format="xml" if is_xml else "text", timestamp=top.text("timestamp"),
        driver_version=driver, cuda_version=top.text("cuda_version", "cuda_umd_version"),
        attached_gpus=top.integer("attached_gpus"), gpus=gpus, warnings=warnings)
    warnings.extend(gpu_warnings)
    return Streamed(head)


def tables(result: NvidiaSmiQuery) -> list[Table]:
    """One row per GPU with the fields that matter for triage."""
    columns = [left("bus_id"), left("name"), left("pcie"), right("replays"),
               right("ecc_vol_unc"), right("ecc_agg_unc"), left("remap_pend"), right("temp_c"),
               right("power_w"), left("reasons")]
    rows = [(g.pci_bus_id, g.product_name,
             f"gen{g.pcie_gen_current}/{g.pcie_gen_max} x{g.pcie_width_current}/"
             f"{g.pcie_width_max}", g.replay_counter, g.ecc_volatile_uncorrectable_total,
             g.ecc_aggregate_uncorrectable_total, g.remapped_rows_pending, g.temperature_c,
             g.power_draw_w, ",".join(g.clocks_event_reasons) or None) for g in result.gpus]
    return [Table.build(columns, rows,
                        title=[f"driver {result.driver_version}  cuda {result.cuda_version}"])]
