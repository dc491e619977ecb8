"""What every `fabtui` subcommand shares: exit codes, the one-line user error, and the
invocation's settings and workspace (each built once per invocation, on first use).

The subcommand modules import from here, never from `fabtui.cli.app`, so the root group can load
them lazily by name without an import cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from fabtui.config import Settings
    from fabtui.workspace import Workspace

EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class UserError(Exception):
    """A request that cannot be met, explained in one line (exit 2)."""


def settings(ctx: click.Context) -> Settings:
    """The configuration in effect, read once per invocation."""
    # Imported here: the config's models cost more than click itself, and `--help` needs none.
    from fabtui.config import Settings, load_settings, scenario_problem, with_scenario
    from fabtui.errors import InputError, Problem
    from fabtui.workspace.simfabric import follow_running_demo

    root = ctx.find_root()
    cached = root.meta.get("fabtui.settings")
    if cached is None:
        cached = load_settings(root.params.get("config_path"))
        if root.params.get("scenario"):
            # Checked before anything runs: a mistyped name would otherwise open the app on a
            # fabric that never answers, or print a summary before the error.
            reason = scenario_problem(root.params["scenario"])
            if reason is not None:
                raise InputError([Problem("--scenario", None, reason)])
            cached = with_scenario(cached, root.params["scenario"])
        else:
            cached = follow_running_demo(cached)
        root.meta["fabtui.settings"] = cached
    assert isinstance(cached, Settings)
    return cached


def notice_once(message: str) -> None:
    """Say `message` on stderr, once per invocation (the demo fabric's state, say)."""
    ctx = click.get_current_context(silent=True)
    meta = ctx.find_root().meta if ctx is not None else {}
    said: set[str] = meta.setdefault("fabtui.notices", set())
    if message not in said:
        said.add(message)
        click.echo(message, err=True)


def workspace(ctx: click.Context) -> Workspace:
    """The invocation's workspace (built on first use, closed when the command ends)."""
    from fabtui.workspace import Workspace

    root = ctx.find_root()
    cached = root.meta.get("fabtui.workspace")
    if cached is None:
        cached = Workspace(settings(ctx), notice=notice_once)
        root.meta["fabtui.workspace"] = cached
        root.call_on_close(cached.close)
    assert isinstance(cached, Workspace)
    return cached


def key_values(items: tuple[str, ...], option: str, word: str = "key") -> dict[str, str]:
    """`KEY=VALUE` options (`--param`, `--input` ...) as a dict; a `UserError` naming the
    option for an item without `=` or without a key."""
    found = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{option} {item!r}: expected {word}=value")
        found[key.strip()] = value
    return found


job_file_option = click.option(
    "--job-file", type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Read the job from a saved `scontrol show job -d`, `squeue --json` or `sacct -P` "
         "output instead of asking Slurm.")
"""`--job-file`, the same for every command that follows a Slurm job."""
