"""`nvidia-smi -q` (text) and `nvidia-smi -q -x` (XML): per-GPU health and configuration."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class NvsmiQueryGpu(BaseModel):
    """One GPU block (values printed as N/A, Unknown Error or Not Supported are null).

    A field whose section is absent (another driver generation, a `-d` filter) is null too."""

    model_config = ConfigDict(extra="forbid")

    pci_bus_id: str | None = None
    """PCI bus id as printed, e.g. `00000000:01:00.0` (the `GPU ...` block header / `gpu id`)."""
    product_name: str | None = None
    """e.g. `NVIDIA A100-SXM4-80GB`."""
    product_architecture: str | None = None
    """e.g. `Ampere`, `Hopper` (newer drivers only)."""
    uuid: str | None = None
    """`GPU-...` UUID."""
    serial: str | None = None
    """Board serial number."""
    minor_number: int | None = None
    """The `/dev/nvidiaN` minor number."""
    vbios_version: str | None = None
    """VBIOS version as printed."""
    persistence_mode: str | None = None
    """As printed: `Enabled` / `Disabled`."""
    mig_mode: str | None = None
    """Current MIG mode as printed (`Enabled` / `Disabled`); null where MIG is unsupported."""
    mig_mode_pending: str | None = None
    """Pending MIG mode (applies after a GPU reset)."""
    mig_devices: int | None = None
    """Number of MIG devices listed under the GPU; null when no MIG device section is printed."""
    compute_mode: str | None = None
    """As printed: `Default`, `Exclusive_Process`, `Prohibited`."""
    performance_state: str | None = None
    """`P0`..`P12`."""
    fan_speed_pct: int | None = None
    """Fan speed, percent; null on passively cooled boards (N/A)."""
    pcie_gen_current: int | None = None
    """Current PCIe link generation (`Current` under `PCIe Generation`)."""
    pcie_gen_max: int | None = None
    """Maximum PCIe link generation of the link (`Max`)."""
    pcie_gen_device_max: int | None = None
    """Maximum generation the GPU supports (`Device Max`), newer drivers."""
    pcie_gen_host_max: int | None = None
    """Maximum generation the host side supports (`Host Max`), newer drivers."""
    pcie_width_current: int | None = None
    """Current PCIe link width in lanes (`16x` -> 16)."""
    pcie_width_max: int | None = None
    """Maximum PCIe link width in lanes."""
    replay_counter: int | None = None
    """PCIe replays since reset (`Replays Since Reset` / `replay_counter`)."""
    replay_rollover_counter: int | None = None
    """PCIe replay counter rollovers."""
    ecc_mode: str | None = None
    """Current ECC mode as printed (`Enabled` / `Disabled`)."""
    ecc_volatile_correctable_total: int | None = None
    """Volatile (since driver load) correctable ECC errors: the `Total` of `Single Bit` where
    the schema has one, else the sum of the correctable counters (SRAM + DRAM). Null if N/A."""
    ecc_volatile_uncorrectable_total: int | None = None
    """Volatile uncorrectable ECC errors (`Double Bit` total, or SRAM + DRAM uncorrectable)."""
    ecc_aggregate_correctable_total: int | None = None
    """Lifetime (aggregate) correctable ECC errors, same rule as the volatile ones."""
    ecc_aggregate_uncorrectable_total: int | None = None
    """Lifetime (aggregate) uncorrectable ECC errors."""
    ecc_volatile_sram_correctable: int | None = None
    """Volatile SRAM correctable ECC errors (`SRAM Correctable`; Ampere and newer)."""
    ecc_volatile_sram_uncorrectable: int | None = None
    """Volatile SRAM uncorrectable ECC errors (`SRAM Uncorrectable`, or Parity + SEC-DED on
    550+ drivers)."""
    ecc_aggregate_sram_correctable: int | None = None
    """Lifetime SRAM correctable ECC errors."""
    ecc_aggregate_sram_uncorrectable: int | None = None
    """Lifetime SRAM uncorrectable ECC errors."""
    sram_threshold_exceeded: bool | None = None
    """`SRAM Threshold Exceeded` (NVML `bThresholdExceeded`: the SRAM error threshold of field
    diagnostics is exceeded); null where not printed."""
    retired_pages_correctable: int | None = None
    """Pages retired for multiple single-bit (correctable) errors (pre-Ampere page
    retirement)."""
    retired_pages_uncorrectable: int | None = None
    """Pages retired for double-bit (uncorrectable) errors."""
    retired_pages_pending: bool | None = None
    """A page retirement waits for the next GPU reset (`Pending Page Blacklist/Retirement`)."""
    remapped_rows_correctable: int | None = None
    """Rows remapped for correctable errors (Ampere and newer row remapping)."""
    remapped_rows_uncorrectable: int | None = None
    """Rows remapped for uncorrectable errors."""
    remapped_rows_pending: bool | None = None
    """A row remapping waits for a GPU reset."""
    remapped_rows_failure: bool | None = None
    """A row remapping failed (`Remapping Failure Occurred`): hardware."""
    temperature_c: int | None = None
    """GPU core temperature, °C."""
    memory_temperature_c: int | None = None
    """HBM temperature, °C (data-center GPUs)."""
    temperature_shutdown_c: int | None = None
    """The part's own GPU shutdown temperature (`GPU Shutdown Temp`, `gpu_temp_max_threshold`);
    null where printed N/A or as a T.Limit offset (560+ text)."""
    temperature_slowdown_c: int | None = None
    """GPU slowdown temperature (`GPU Slowdown Temp`, `gpu_temp_slow_threshold`): hardware
    throttling starts here."""
    temperature_max_operating_c: int | None = None
    """GPU max operating temperature (`GPU Max Operating Temp`, `gpu_temp_max_gpu_threshold`)."""
    memory_temperature_max_c: int | None = None
    """Memory max operating temperature (`Memory Max Operating Temp`,
    `gpu_temp_max_mem_threshold`)."""
    power_draw_w: float | None = None
    """Power draw, W (`Power Draw`; on newer drivers the instantaneous, else the average one)."""
    power_limit_w: float | None = None
    """Power limit in force, W (`Current Power Limit` / `Enforced Power Limit`)."""
    clock_graphics_mhz: int | None = None
    """Current graphics clock, MHz."""
    clock_sm_mhz: int | None = None
    """Current SM clock, MHz."""
    clock_mem_mhz: int | None = None
    """Current memory clock, MHz."""
    clock_graphics_max_mhz: int | None = None
    """Maximum graphics clock, MHz."""
    clock_sm_max_mhz: int | None = None
    """Maximum SM clock, MHz."""
    clock_mem_max_mhz: int | None = None
    """Maximum memory clock, MHz."""
    clocks_event_reasons: list[str] = []
    """Clock event (throttle) reasons that are `Active`, normalised to the XML names without
    prefix: `gpu_idle`, `applications_clocks_setting`, `sw_power_cap`, `hw_slowdown`,
    `hw_thermal_slowdown`, `hw_power_brake_slowdown`, `sync_boost`, `sw_thermal_slowdown`,
    `display_clocks_setting`."""
    fabric_state: str | None = None
    """NVLink fabric (NVSwitch / Fabric Manager) state as printed, e.g. `Completed`; null
    where N/A."""
    fabric_status: str | None = None
    """Fabric status as printed, e.g. `Success`."""
    fabric_clique_id: str | None = None
    """Fabric clique id (multi-node NVLink)."""
    fabric_cluster_uuid: str | None = None
    """Fabric cluster UUID (multi-node NVLink)."""
    utilization_gpu_pct: int | None = None
    """GPU utilisation, percent."""
    utilization_memory_pct: int | None = None
    """Memory controller utilisation, percent."""
    memory_used_mib: int | None = None
    """Frame buffer memory used, MiB."""
    memory_total_mib: int | None = None
    """Frame buffer memory total, MiB."""
    gpu_reset_required: bool | None = None
    """`GPU Reset Status / Reset Required` (newer drivers)."""


class NvidiaSmiQuery(ParsedOutput):
    """Driver versions and one entry per GPU block, from the text or the XML form."""

    kind: Literal["nvidia-smi-q"] = "nvidia-smi-q"
    format: Literal["text", "xml"]
    """Which form was parsed: `nvidia-smi -q` text or `nvidia-smi -q -x` XML."""
    timestamp: str | None = None
    """The capture time as printed."""
    driver_version: str | None = None
    """NVIDIA driver version, e.g. `550.127.05`."""
    cuda_version: str | None = None
    """Highest CUDA version the driver supports, e.g. `12.4`."""
    attached_gpus: int | None = None
    """`Attached GPUs` as printed (the machine's count; `-i` shows fewer GPU blocks)."""
    gpus: list[NvsmiQueryGpu]
    """GPU blocks in printed order."""
