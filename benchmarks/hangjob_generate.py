"""Simulated hung-job logs at triage-benchmark scale: how long 1,024 ranks x 1 MB take to write.

Issue 13: the triage benchmark reads 1,024 ranks x 1 MB of logs; the generator that makes them
(`fabtui.sim.hangjob`) must write them well under a minute, with memory that does not grow with
the job (it streams each rank's file, then the combined log phase by phase). Prints the time,
the bytes written, MB/s and the peak resident memory of this process; never fails on timing.

    python benchmarks/hangjob_generate.py               # 1,024 ranks x 1 MB, per-rank files
    python benchmarks/hangjob_generate.py --combined    # job.log too (twice the bytes)
    python benchmarks/hangjob_generate.py --smoke       # 128 ranks x 64 kB (CI)
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from fabtui.sim.hangjob import JobSpec, generate
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology, shipped_template


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--combined", action="store_true")
    parser.add_argument("--case", default="optic")
    parser.add_argument("--out", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()
    ranks, size = (128, 64_000) if args.smoke else (1024, 1_000_000)
    template = shipped_template("h100-1024gpu-rail")
    assert template is not None
    graph = FabricGraph(load_topology(template).topology)
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch) / "job"
        spec = JobSpec(case=args.case, ranks=ranks, nccl="2.27", bytes_per_rank=size,
                       combined=args.combined)
        start = time.perf_counter()
        manifest = generate(out, spec, graph)
        took = time.perf_counter() - start
        written = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{ranks} ranks x {size / 1e6:g} MB ({args.case}, culprits {manifest['culprits']}): "
          f"{written / 1e6:.0f} MB in {took:.1f} s = {written / 1e6 / took:.0f} MB/s, "
          f"peak RSS {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
