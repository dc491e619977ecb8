"""Building a report from a large session: `fabtui report SESSION --format html|md`.

Target (issue "Reports", 2-core CI machine): a report of a 200-block session in <= 2 s.

The session is real: customer-acceptance run on the demo fabric (healthy), its events copied
until the session holds at least 200 finished blocks (block ids made unique), so the report
reads real probe results, parsed nccl-tests curves and perftest pairs. Each figure is printed
beside `fabtui runbook journal SESSION` (which reads and prints the same events) measured in
the same run, and the ratio. Never fails on timing.

    python benchmarks/report_build.py            # 400 blocks
    python benchmarks/report_build.py --smoke    # 200 blocks (CI)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fabtui.journal.store import Journal, journal_path


def _fabtui(config: Path, *args: str) -> float:
    """Seconds `fabtui ARGS` took; a failure exits with what it printed (its last lines)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fabtui", "--config", str(config), *args],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
        sys.exit(f"fabtui {' '.join(args)}: exit {done.returncode}\n{tail}")
    return time.perf_counter() - started


def _big_session(data: Path, blocks: int) -> str:
    """A session of at least `blocks` finished blocks, copied from the newest session."""
    journal = Journal(journal_path(data))
    try:
        source = journal.sessions(1)[0]
        events = journal.events(source.id)
        big = journal.start(source.runbook, source.title, source.path, "bench", {})
        copies, finished = 0, 0
        while finished < blocks:
            for event in events:
                if event.kind in ("session_finished",) and finished < blocks:
                    continue
                block = f"{event.block}-{copies}" if event.block else None
                journal.append(big, event.kind.value, event.step, block, event.data.record())
                finished += event.kind.value == "block_finished"
            copies += 1
        journal.set_status(big, source.status)
        return big
    finally:
        journal.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="200 blocks (CI)")
    args = parser.parse_args()
    blocks = 200 if args.smoke else 400
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        config = base / "fabtui.toml"
        config.write_text(f'data_dir = "{base / "data"}"\n')
        os.environ.pop("FABTUI_CONFIG", None)
        _fabtui(config, "--scenario", "healthy", "runbook", "run", "customer-acceptance",
                "--answer", "idle=yes")
        session = _big_session(base / "data", blocks)
        reference = min(_fabtui(config, "runbook", "journal", session) for _ in range(2))
        print(f"{os.cpu_count()} CPUs; session {session}: {blocks}+ blocks of a real "
              "customer-acceptance run")
        for fmt in ("md", "html"):
            out = base / f"report.{fmt}"
            seconds = min(_fabtui(config, "report", session, "--format", fmt, "-o", str(out))
                          for _ in range(2))
            verdict = "ok" if seconds <= 2 else "OVER TARGET"
            print(f"report --format {fmt:<4} {seconds:6.2f} s (target <= 2 s) {verdict}; "
                  f"{out.stat().st_size / 1e6:.1f} MB; `runbook journal` {reference:5.2f} s, "
                  f"ratio {seconds / reference:4.1f}x")


if __name__ == "__main__":
    main()
