"""The simulated devices as programs: `python -m fabtui.sim switch|node ...`.

- `switch --name leaf-g00-r3`: an interactive CLI in the switch's flavor on stdin/stdout, as
  `ssh -tt` to a real switch would give (prompt, echo, pager until paging is turned off);
- `node --name node003 -- ethtool -S enp24s0f0np0`: runs one command on a simulated node and
  exits with its status, as `ssh node003 ethtool ...` would.

Both read the running demo fabric from the state file (`--state`, else `FABTUI_SIM_STATE`, else
the default data folder), and answer after the delay `FABTUI_SIM_LATENCY` gives the device.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from fabtui.errors import InputError
from fabtui.paths import default_data_dir
from fabtui.sim import latency
from fabtui.sim.state import load_or_problem, state_file


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m fabtui.sim")
    parser.add_argument("--state", type=Path, default=None)
    sub = parser.add_subparsers(dest="device", required=True)
    switch = sub.add_parser("switch", help="an interactive switch CLI")
    switch.add_argument("--name", required=True)
    node = sub.add_parser("node", help="run one command on a simulated node")
    node.add_argument("--name", required=True)
    node.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    path = args.state or state_file(default_data_dir())
    try:
        delay = latency.from_env().of(args.name)
        state = load_or_problem(path)
        if args.device == "switch":
            from fabtui.sim.switch_session import serve

            return serve(path, state, args.name, delay)
        from fabtui.sim.node_commands import run
        from fabtui.sim.state import build_sim

        sim = build_sim(state)
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        time.sleep(delay)
        out, err, status = run(sim, args.name, command, state.now())
    except InputError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    sys.stdout.write(out)
    sys.stderr.write(err)
    return status


if __name__ == "__main__":
    sys.exit(main())
