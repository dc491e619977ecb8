"""`nvidia-smi nvlink -e` (`--errorcounters`): NVLink error counters per GPU and link."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput


class NvlinkLinkErrors(BaseModel):
    """One link's counters (`Link 0: Replay Errors: 0`)."""

    model_config = ConfigDict(extra="forbid")

    link: int
    """NVLink number on the GPU."""
    counters: dict[str, int]
    """Counter name as printed -> value since the driver loaded or the counters were reset
    (`Replay Errors`, `Recovery Errors`, `CRC Errors`; newer drivers print more, e.g. `Rx
    Errors`, `Effective Errors`). A counter the driver does not print is absent, not zero."""


class NvlinkErrorsGpu(BaseModel):
    """One GPU block (`GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)`)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    """GPU index as nvidia-smi numbers it."""
    name: str | None = None
    """Product name, e.g. `NVIDIA H100 80GB HBM3`."""
    uuid: str | None = None
    """GPU UUID, e.g. `GPU-abcdefab-...`."""
    links: list[NvlinkLinkErrors] = Field(default_factory=list)
    """Links in the order printed."""


class NvlinkErrors(ParsedOutput):
    """Per GPU, per NVLink, the error counters the driver prints."""

    kind: Literal["nvlink-errors"] = "nvlink-errors"
    gpus: list[NvlinkErrorsGpu]
    """GPUs in the order printed."""
