"""`show_gids` (mlnx-tools): the RoCE/IB GID table of every RDMA device port."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class GidEntry(BaseModel):
    """One row of the GID table."""

    model_config = ConfigDict(extra="forbid")

    dev: str
    """RDMA device, e.g. `mlx5_0`, `mlx5_bond_0`."""
    port: int
    """Port number."""
    index: int
    """GID index (what `NCCL_IB_GID_INDEX` / `-x` select)."""
    gid: str
    """The GID as printed."""
    ipv4: str | None = None
    """IPv4 address of an IPv4-mapped GID; null when the column is empty."""
    version: str | None = None
    """RoCE version: `v1` or `v2`; null when not printed."""
    netdev: str | None = None
    """The netdev the GID belongs to (last column); null when empty."""


class ShowGidsOutput(ParsedOutput):
    """The GID table, in the order printed."""

    kind: Literal["show-gids"] = "show-gids"
    gids: list[GidEntry]
    """Rows of the table."""
    n_gids_found: int | None = None
    """The `n_gids_found=N` trailer; null when the capture lacks it."""
