"""Which of a node's NICs an `NCCL_IB_HCA` value selects, read the way NCCL reads it.

NCCL env docs (NVIDIA/nccl `docs/.../env.rst`, section NCCL_IB_HCA; quoted in
stas00/ml-engineering `network/debug/README.md`): a comma list of names; a name is a prefix
(`mlx5` takes every `mlx5*` card) unless the list starts with `=` (exact names); a leading `^`
excludes the listed cards instead (`^=mlx5_1,mlx5_4`: every card but those two); `:port`
after a name picks a port (`=mlx5_0:1,mlx5_1:1`). Unset or empty: every NIC. Pure, no I/O.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from fabtui.model.topology import Nic, Node


@dataclass(frozen=True)
class HcaFilter:
    """A parsed `NCCL_IB_HCA` value."""

    names: tuple[str, ...]
    """The card names, `:port` suffixes dropped (the demo's NICs have one port each)."""
    exact: bool = False
    exclude: bool = False

    def selects(self, nic: str) -> bool:
        """True when NCCL would use the NIC named `nic` under this filter."""
        named = any(nic == n if self.exact else nic.startswith(n) for n in self.names)
        return named != self.exclude


def parse_hca(value: str | None) -> HcaFilter | None:
    """The filter an `NCCL_IB_HCA` value sets; None when it is unset or empty (every NIC)."""
    if not value:
        return None
    exclude = value.startswith("^")
    rest = value.removeprefix("^")
    exact = rest.startswith("=")
    names = tuple(w.split(":")[0] for w in rest.removeprefix("=").split(",") if w.strip())
    return HcaFilter(names=tuple(n.strip() for n in names), exact=exact, exclude=exclude)


def selected_nics(node: Node, value: str | None) -> list[Nic]:
    """The NICs of `node` NCCL uses under `NCCL_IB_HCA=value` (every NIC when unset)."""
    found = parse_hca(value)
    return list(node.nics) if found is None else [n for n in node.nics if found.selects(n.name)]


def hca_in_command(command: str) -> str | None:
    """The last `NCCL_IB_HCA=` a command line sets (`mpirun -x NCCL_IB_HCA=...`, `env ...`,
    an `export`): the environment's last assignment wins. None when it sets none."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    found = None
    for word in words:
        for part in word.split(";"):
            if part.startswith("NCCL_IB_HCA="):
                found = part.split("=", 1)[1]
    return found
