"""The default `nvidia-smi` table: one cell block per GPU and the Processes table."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class NvsmiTableGpu(BaseModel):
    """One GPU's cell block (2 lines on old drivers, 3 with the MIG line)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    """GPU index as printed (the `GPU` column)."""
    name: str
    """Product name as printed (may be truncated with `...` by the tool)."""
    persistence_mode: str | None
    """`On` / `Off` (or `TCC` / `WDDM` on Windows)."""
    bus_id: str | None
    """PCI bus id as printed, e.g. `00000000:00:04.0`."""
    display_active: str | None
    """`Disp.A` column: `On` / `Off`."""
    volatile_uncorrectable_ecc: int | None
    """`Volatile Uncorr. ECC`; null when printed N/A or `Off` (ECC disabled)."""
    fan_pct: int | None
    """Fan speed, percent; null for N/A (passively cooled)."""
    temperature_c: int | None
    """GPU temperature, °C."""
    perf_state: str | None
    """Performance state, `P0`..`P12`."""
    power_draw_w: float | None
    """Power usage, W."""
    power_cap_w: float | None
    """Power cap, W."""
    memory_used_mib: int | None
    """Memory used, MiB."""
    memory_total_mib: int | None
    """Memory total, MiB."""
    utilization_pct: int | None
    """`GPU-Util`, percent."""
    compute_mode: str | None
    """As printed: `Default`, `E. Process`, `Prohibited`."""
    mig_mode: str | None
    """`MIG M.` line: `Enabled` / `Disabled`; null for N/A or on drivers without the line."""


class NvsmiTableProcess(BaseModel):
    """One row of the Processes table."""

    model_config = ConfigDict(extra="forbid")

    gpu: int
    """GPU index."""
    gi_id: str | None
    """MIG GPU instance id (null for N/A or on drivers without the column)."""
    ci_id: str | None
    """MIG compute instance id (null for N/A or on drivers without the column)."""
    pid: int
    """Process id."""
    type: str
    """`C` (compute), `G` (graphics), `C+G`, `M`..."""
    process_name: str
    """As printed (long names are truncated by the tool)."""
    used_memory_mib: int | None
    """GPU memory used, MiB; null for N/A."""


class NvsmiTableMigDevice(BaseModel):
    """One row of the `MIG devices:` table (a GPU instance / compute instance pair)."""

    model_config = ConfigDict(extra="forbid")

    gpu: int
    """Index of the parent GPU."""
    gi_id: int
    """GPU instance id."""
    ci_id: int
    """Compute instance id."""
    mig_device: int
    """MIG device index (`MIG Dev`)."""
    memory_used_mib: int | None
    """Memory used, MiB (`Memory-Usage`, `Shared Memory-Usage` on 580+: compute instances of
    one GPU instance share it)."""
    memory_total_mib: int | None
    """Memory of the instance, MiB."""
    bar1_used_mib: int | None
    """BAR1 used, MiB (second line of the row; null where the driver prints none)."""
    bar1_total_mib: int | None
    """BAR1 size, MiB."""
    sm_count: int | None
    """Streaming multiprocessors of the instance (`SM`)."""
    volatile_uncorrectable_ecc: int | None
    """`Vol Unc ECC` of the instance; null for N/A."""
    shared: dict[str, int | None]
    """`Shared` engines by printed name (`CE`, `ENC`, `DEC`, `OFA`, `JPG`): counts."""


class NvidiaSmiTable(ParsedOutput):
    """Header versions, the GPU blocks and the processes."""

    kind: Literal["nvidia-smi"] = "nvidia-smi"
    timestamp: str | None = None
    """The date line printed above the table, if captured."""
    nvidia_smi_version: str | None = None
    """`NVIDIA-SMI` version in the header."""
    driver_version: str | None = None
    """`Driver Version` in the header, or `KMD Version` (kernel-mode driver), which replaces
    it from R610 on."""
    cuda_version: str | None = None
    """`CUDA Version` in the header, or `CUDA UMD Version` (user-mode driver), which replaces
    it from R610 on (absent on very old drivers)."""
    gpus: list[NvsmiTableGpu]
    """GPU blocks in printed order."""
    processes: list[NvsmiTableProcess]
    """Processes table rows; empty for `No running processes found`."""
    mig_devices: list[NvsmiTableMigDevice] = Field(default_factory=list)
    """`MIG devices:` table rows; empty when MIG is off or `No MIG devices found`."""
