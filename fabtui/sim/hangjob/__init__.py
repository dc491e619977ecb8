"""Simulated hung training jobs: per-rank logs in the real formats, with the answer beside them.

`generate(out, spec, graph)` writes the logs a hung job of 8 to 1,024 ranks leaves behind, as NCCL
2.18-2.27 and PyTorch 2.1 / 2.4 / 2.6 word them, and `expected.json`, the ground truth a triage
must find. Ranks are placed by the fabric graph (8 per node in node order, or the rank file), so
every rank's node, GPU, NIC, NIC address, leaf port and optic in the logs and in the manifest is
the topology's.

Files written under `out/`:

- `rank-N.log`: what rank N printed (NCCL_DEBUG=INFO init, training iterations, the failure);
- `job.log`: the same lines of every rank as `srun -l torchrun ...` collects them (the prefix is
  the srun task, one per node; PyTorch's own lines carry `[rankN]:`, the global rank), ending with
  each node agent's torchrun failure summary;
- `fr/nccl_trace_rank_N` (pickle) and `fr/nccl_trace_rank_N.json`: Flight Recorder dumps;
- `ras/ncclras-status.txt`: `ncclras` output (NCCL 2.24+), asked on a healthy node after the hang;
- `expected.json`: the case's ground truth (see docs/triage-sim.md).

The cases are the ones where naive reading misleads (`CASES`). Everything is a function of the
spec (the seed included): two runs write identical files. Files are written as they are produced
(per rank, then the combined log in phase order), so memory stays small at any size.

The package: `spec.py` (the job spec, the cases, the job and its ranks as played), `lines.py` (the
NCCL and PyTorch line formats), `cases.py` (the job built and each case played on it),
`artefacts.py` (Flight Recorder dumps, `ncclras` output, torchrun's failure summary) and
`write.py` (`generate`: the files written; not `generate.py`, which the function would shadow).
"""

from __future__ import annotations

from fabtui.sim.hangjob.spec import (
    CASES,
    MAX_RANKS,
    MIN_RANKS,
    NCCL_RELEASES,
    TORCH_RELEASES,
    JobSpec,
    SpecError,
    nccl_release,
)
from fabtui.sim.hangjob.write import generate

__all__ = ["CASES", "MAX_RANKS", "MIN_RANKS", "NCCL_RELEASES", "TORCH_RELEASES", "JobSpec",
           "SpecError", "generate", "nccl_release"]
