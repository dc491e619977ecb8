"""The `fabtui` command: the root group, configuration, and the error policy.

Error policy: bad input (a file, a parameter, a rank or component that does not exist) prints one
line per problem as `file:line: message` on stderr and exits 2; a command's own verdict (findings of
severity error) exits 1. No traceback reaches the user; set FABTUI_DEBUG=1 to see one for a bug.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import click

from fabtui import __version__
from fabtui.config import Settings, load_settings
from fabtui.errors import InputError

EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class UserError(Exception):
    """A request that cannot be met, explained in one line (exit 2)."""


class FabtuiGroup(click.Group):
    """A click group that turns fabtui's errors into readable lines and exit codes."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            for problem in exc.problems:
                click.echo(str(problem), err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except UserError as exc:
            click.echo(f"fabtui: {exc}", err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except BrokenPipeError:
            # `fabtui topo ports | head`: the reader left; that is not an error.
            sys.stderr.close()
            ctx.exit(0)
        except Exception as exc:
            if os.environ.get("FABTUI_DEBUG"):
                raise
            click.echo(f"fabtui: internal error: {type(exc).__name__}: {exc} "
                       "(set FABTUI_DEBUG=1 for the traceback, and please report it)", err=True)
            ctx.exit(EXIT_INTERNAL)


def settings(ctx: click.Context) -> Settings:
    """The configuration in effect, read once per invocation."""
    root = ctx.find_root()
    cached = root.meta.get("fabtui.settings")
    if cached is None:
        cached = load_settings(root.params.get("config_path"))
        if root.params.get("scenario"):
            cached = dataclasses.replace(cached, scenario=root.params["scenario"],
                                         scenario_chosen=True)
        root.meta["fabtui.settings"] = cached
    assert isinstance(cached, Settings)
    return cached


@click.group(cls=FabtuiGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Config file (default: $FABTUI_CONFIG, then the user config file).")
@click.option("--scenario", metavar="NAME",
              help="Fault scenario the demo fabric plays (see `fabtui sim list`).")
@click.version_option(__version__, prog_name="fabtui")
@click.pass_context
def cli(ctx: click.Context, config_path: Path | None, scenario: str | None) -> None:
    """fabtui: topology, probes, runbooks and a case library for AI fabrics.

    With no command, prints a summary of the configured fabric (the built-in demo fabric when
    nothing is configured).
    """
    if ctx.invoked_subcommand is None:
        from fabtui.cli.topo import print_overview

        print_overview(ctx)


@cli.command("config")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def config_command(ctx: click.Context, as_json: bool) -> None:
    """Show the configuration in effect and where it came from."""
    s = settings(ctx)
    values = {
        "config_file": str(s.source) if s.source else None,
        "topology": str(s.topology), "ranks": str(s.ranks) if s.ranks else None,
        "scenario": s.scenario, "simulated": s.simulated, "data_dir": str(s.data_dir),
        "runbook_dirs": [str(p) for p in s.runbook_dirs],
        "case_dirs": [str(p) for p in s.case_dirs],
        "probe_dirs": [str(p) for p in s.probe_dirs],
        "template_dirs": [str(p) for p in s.template_dirs],
    }
    if as_json:
        import json

        click.echo(json.dumps(values, indent=2))
        return
    if s.source is None:
        click.echo("no config file: running on defaults (the built-in demo fabric)")
    for key, value in values.items():
        if isinstance(value, list):
            value = ", ".join(value) or "-"
        click.echo(f"{key:<14}{value if value is not None else '-'}")


def _register() -> None:
    from fabtui.cli.parse import parse_command
    from fabtui.cli.probe import probe
    from fabtui.cli.runbook import runbook
    from fabtui.cli.sim import sim
    from fabtui.cli.topo import topo

    cli.add_command(topo)
    cli.add_command(parse_command)
    cli.add_command(probe)
    cli.add_command(sim)
    cli.add_command(runbook)


_register()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="fabtui")
