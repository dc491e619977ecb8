"""Where each rank of a job runs: rank -> node and GPU.

By default ranks fill nodes in file order and each node's GPUs in index order (`torchrun` /
`mpirun` with 8 ranks per node). A rank file can say otherwise, in any of the forms launchers use:

- Open MPI rankfile lines: `rank 5=node02 slot=3` (the slot is taken as the GPU index);
- a plain table: `5 node02 3` (rank, host, GPU), or `node02 3` lines in rank order;
- a hostfile: `node02 slots=8` lines, ranks filling each host's GPUs in order.

Blank lines and `#` comments are ignored. Problems are reported as `file:line: message`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from fabtui.errors import InputError, Problem
from fabtui.model.topology import Topology


class RankSlot(NamedTuple):
    """One rank's place: the node and the GPU index on it."""

    rank: int
    node: str
    gpu: int


def default_ranks(topology: Topology) -> list[RankSlot]:
    """Ranks in node order, GPUs in index order: what a plain 8-per-node launch produces."""
    slots: list[RankSlot] = []
    for node in topology.nodes:
        for gpu in sorted(g.index for g in node.gpus):
            slots.append(RankSlot(len(slots), node.hostname, gpu))
    return slots


_OMPI = re.compile(r"^rank\s+(\d+)\s*=\s*(\S+)\s+slot\s*=\s*(\d+)(?::\S*)?\s*$", re.IGNORECASE)
_TABLE = re.compile(r"^(\d+)[\s,]+(\S+?)[\s,]+(\d+)\s*$")
_PAIR = re.compile(r"^(\S+?)[\s,]+(\d+)\s*$")
_HOST = re.compile(r"^(\S+?)(?:\s+slots\s*=\s*(\d+))?(?:\s+max_slots\s*=\s*\d+)?\s*$")


def parse_rankfile(path: Path, topology: Topology, label: str | None = None) -> list[RankSlot]:
    """Read a rank file (see module docstring); every rank must land on a real node and GPU."""
    source = label or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError.single(source, None, f"cannot read rank file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InputError.single(source, None, "not UTF-8 text") from None
    return parse_rank_text(text, topology, source)


def parse_rank_text(text: str, topology: Topology, source: str) -> list[RankSlot]:
    """Parse rank-file `text`; `source` names it in messages."""
    gpus = {n.hostname: sorted(g.index for g in n.gpus) for n in topology.nodes}
    placed: dict[int, tuple[RankSlot, int]] = {}
    problems: list[Problem] = []
    next_rank = 0

    def place(rank: int, host: str, gpu: int, line: int) -> None:
        if host not in gpus:
            problems.append(Problem(source, line, f"host {host!r} is not a node of the topology"))
        elif gpu not in gpus[host]:
            problems.append(Problem(source, line, f"{host} has no GPU {gpu} "
                                                  f"(it has {len(gpus[host])} GPUs)"))
        elif rank in placed:
            problems.append(Problem(source, line, f"rank {rank} is already placed on line "
                                                  f"{placed[rank][1]}"))
        else:
            placed[rank] = (RankSlot(rank=rank, node=host, gpu=gpu), line)

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if (m := _OMPI.match(line)) or (m := _TABLE.match(line)):
            place(int(m.group(1)), m.group(2), int(m.group(3)), number)
        elif m := _PAIR.match(line):
            place(next_rank, m.group(1), int(m.group(2)), number)
        elif m := _HOST.match(line):
            host = m.group(1)
            available = gpus.get(host)
            if available is None:
                problems.append(Problem(source, number, f"host {host!r} is not a node of the "
                                                        "topology"))
                continue
            count = int(m.group(2)) if m.group(2) else len(available)
            if count > len(available):
                problems.append(Problem(source, number, f"{host} has {len(available)} GPUs, "
                                                        f"not {count} slots"))
                continue
            for gpu in available[:count]:
                place(next_rank, host, gpu, number)
                next_rank += 1
            continue
        else:
            problems.append(Problem(source, number, f"cannot read {raw.strip()!r}: expected "
                                                    "'rank N=host slot=GPU', 'N host GPU', "
                                                    "'host GPU' or 'host slots=N'"))
            continue
        next_rank = max(placed) + 1 if placed else next_rank
    if not problems and placed:
        missing = sorted(set(range(max(placed) + 1)) - set(placed))
        if missing:
            problems.append(Problem(source, None,
                                    f"ranks {compact_ranges(missing)} are not placed"))
        used: dict[tuple[str, int], int] = {}
        for slot, at in placed.values():
            key = (slot.node, slot.gpu)
            if key in used:
                problems.append(Problem(source, at, f"{slot.node} GPU {slot.gpu} already runs "
                                                      f"rank {used[key]}"))
            used[key] = slot.rank
    if not placed and not problems:
        problems.append(Problem(source, None, "no ranks in file"))
    if problems:
        raise InputError(problems)
    return [placed[r][0] for r in sorted(placed)]


def compact_ranges(numbers: Sequence[int]) -> str:
    """`[1, 2, 3, 7]` -> `"1-3, 7"`: how people write sets of ranks, rails and ports."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
