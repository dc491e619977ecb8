"""The `fabtui` command: the root group, configuration, and the error policy.

Error policy: bad input (a file, a parameter, a rank or component that does not exist) prints one
line per problem as `file:line: message` on stderr and exits 2; a command's own verdict (findings of
severity error) exits 1. A full disk or a file or folder fabtui may not write is no bug either: it
is named as what it is, with where (`disk full while writing ...`), and exits 2. No traceback
reaches the user; set FABTUI_DEBUG=1 to see one for a bug.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

import click

from fabtui import __version__
from fabtui.cli.context import (
    EXIT_BAD_INPUT,
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    UserError,
    settings,
    workspace,
)
from fabtui.errors import InputError, RequestError

__all__ = ["EXIT_BAD_INPUT", "EXIT_FINDINGS", "EXIT_INTERNAL", "UserError", "cli", "main",
           "settings", "workspace"]

class Subcommand(NamedTuple):
    """Where a subcommand lives, and its one-line help for `fabtui --help`."""

    target: str
    """`module:attribute` of the click command, imported only when that subcommand is used."""
    short_help: str
    """The command's own short help (tests/test_import_hygiene.py keeps the two equal), so the
    root `--help` lists every subcommand without importing any."""


SUBCOMMANDS = {
    "topo": Subcommand("fabtui.cli.topo:topo",
                       "The fabric model: validate it, query it, generate it."),
    "parse": Subcommand("fabtui.cli.parse:parse_command",
                        "Parse the output of a supported tool (FILE, or - for standard input) "
                        "into JSON."),
    "probe": Subcommand("fabtui.cli.probe:probe",
                        "Probes: commands and API calls that measure the fabric and judge what "
                        "they find."),
    "sim": Subcommand("fabtui.cli.sim:sim",
                      "The simulated demo fabric: scenarios, clock, fault injection, device "
                      "programs."),
    "runbook": Subcommand("fabtui.cli.runbook:runbook",
                          "Runbooks: executable markdown procedures, recorded step by step."),
    "report": Subcommand("fabtui.cli.report:report",
                         "Reports a customer can read, from journaled sessions."),
    "cases": Subcommand("fabtui.cli.cases:cases",
                        "The case library: past incidents, searchable by symptom in English "
                        "and Chinese."),
    "triage": Subcommand("fabtui.cli.triage:triage",
                         "Hang triage: read a hung job's logs and say which rank, NIC or link "
                         "it waits for."),
    "prom": Subcommand("fabtui.cli.prom:prom",
                       "Read the fabric from Prometheus: check the label mapping, show the "
                       "PromQL."),
    "alerts": Subcommand("fabtui.cli.alerts:alerts",
                         "Alertmanager's alerts as fabric incidents: receive, list, show, "
                         "silence."),
    "baseline": Subcommand("fabtui.cli.baseline:baseline",
                           "Known-good states: record one, list them (`fabtui drift "
                           "--since-good` compares)."),
    "drift": Subcommand("fabtui.cli.drift:drift",
                        "Compare the running configuration with the intent: each difference "
                        "per device, with the command that fixes it (exit 1 when there is "
                        "one)."),
    "fleet": Subcommand("fabtui.cli.fleet:fleet",
                        "The selection database: what the fleet runs against validated "
                        "combinations."),
    "tui": Subcommand("fabtui.cli.tui:tui",
                      "Open the live fabric view (the configured fabric; the demo fabric by "
                      "default)."),
}
"""Subcommand name -> where it lives and its short help."""
MAX_PROBLEMS_SHOWN = 50
"""Problems printed for one bad input; the rest are counted (a topology of 100,000 nodes each
missing a field is 200,000 lines that hide the pattern, not show it)."""
MAX_MESSAGE_SHOWN = 2_000
"""Characters printed of one message: what a message quotes from the input (a 50 MB value)
is cut, not echoed."""



class FabtuiGroup(click.Group):
    """A click group that turns fabtui's errors into readable lines and exit codes, and loads
    its subcommands lazily (click's documented `LazyGroup` pattern): `fabtui parse` never
    imports the runbook engine, `fabtui --help` imports no subcommand at all, and no subcommand
    module imports this one."""

    def __init__(self, *args: Any, lazy: dict[str, Subcommand] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, attribute = self.lazy[cmd_name].target.partition(":")
            command = getattr(importlib.import_module(module), attribute)
            assert isinstance(command, click.Command)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own listing, with the short help of a subcommand not yet loaded taken from
        the table instead of importing it (the layout is click's, so the text is identical)."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            if name in self.lazy and name not in self.commands:
                # A stand-in carrying only the help text: click shortens it as it would the real.
                rows.append((name, click.Command(name, help=self.lazy[name].short_help)))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            for problem in exc.problems[:MAX_PROBLEMS_SHOWN]:
                click.echo(_cut(str(problem)), err=True)
            if len(exc.problems) > MAX_PROBLEMS_SHOWN:
                click.echo(f"... and {len(exc.problems) - MAX_PROBLEMS_SHOWN:,} more problems",
                           err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except (UserError, RequestError) as exc:
            click.echo(_cut(f"fabtui: {exc}"), err=True)
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
            said = storage_error(exc, _data_dir(ctx))
            if said is not None:
                click.echo(f"fabtui: {_masked(ctx, said)}", err=True)
                ctx.exit(EXIT_BAD_INPUT)
            click.echo(f"fabtui: internal error: {type(exc).__name__}: {_masked(ctx, exc)} "
                       "(set FABTUI_DEBUG=1 for the traceback, and please report it)", err=True)
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=FabtuiGroup, lazy=SUBCOMMANDS, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Config file (default: $FABTUI_CONFIG, then the user config file).")
@click.option("--scenario", metavar="NAME",
              help="Fault scenario the demo fabric plays (see `fabtui sim list`).")
@click.version_option(__version__, prog_name="fabtui")
@click.pass_context
def cli(ctx: click.Context, config_path: Path | None, scenario: str | None) -> None:
    """fabtui: topology, probes, runbooks and a case library for AI fabrics.

    With no command, opens the live fabric view on a terminal (`fabtui tui`), and prints a
    summary of the configured fabric when standard output is not one (the built-in demo fabric
    when nothing is configured).
    """
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            from fabtui.cli.tui import open_app

            open_app(ctx)
            return
        from fabtui.cli.topo import print_overview

        print_overview(ctx)


@cli.group("config", cls=FabtuiGroup, invoke_without_command=True, lazy={
    "render": Subcommand("fabtui.cli.configs:render", "Render a configuration scenario for "
                         "the fabric's devices."),
    "scenarios": Subcommand("fabtui.cli.configs:scenarios", "List the configuration "
                            "scenarios."),
})
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def config_command(ctx: click.Context, as_json: bool) -> None:
    """Show the configuration in effect and where it came from; `config render SCENARIO`
    renders the fabric's intended device configuration (configs/)."""
    if ctx.invoked_subcommand is not None:
        return
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


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="fabtui")


_KEPT = ("the command stopped there; what it had recorded before is kept (an interrupted "
         "runbook session continues with `fabtui runbook resume`)")


def storage_error(exc: BaseException, data_dir: Path | None) -> str | None:
    """What a failure to write (or open) a file says when it is not a bug: a full disk, a
    read-only file or file system, a permission, a data folder that is a file; None for any
    other exception. SQLite does not say which file it was writing: every database fabtui
    writes is in the data folder, so that is named."""
    import sqlite3

    from fabtui.paths import display_path

    if data_dir is not None:
        data_dir = Path(os.path.abspath(data_dir))
    folder = f"the data folder {display_path(data_dir)}" if data_dir is not None else \
        "the data folder"
    if isinstance(exc, sqlite3.Error):
        name = str(getattr(exc, "sqlite_errorname", "") or "")
        text = str(exc)
        if name == "SQLITE_FULL" or "disk is full" in text:
            return f"disk full while writing to {folder}{_free(data_dir)}: {_KEPT}"
        if name.startswith("SQLITE_READONLY") or "readonly database" in text:
            return (f"cannot write to {folder}: a database there is read-only ({text}); check "
                    "the owner and mode of its files, or set data_dir to a folder you can "
                    "write")
        if name.startswith("SQLITE_CANTOPEN") or "unable to open database" in text:
            return (f"cannot open a database in {folder} ({text}): it must be a folder you can "
                    "write (SQLite writes beside a database even to read it), or set data_dir "
                    "to one")
        if name.startswith("SQLITE_IOERR") or "disk I/O error" in text:
            return (f"the disk failed a write to {folder} ({text}){_free(data_dir)}: {_KEPT}; "
                    "check the disk and the space left")
        return None
    if not isinstance(exc, OSError):
        return None
    path = Path(os.path.abspath(os.fspath(exc.filename))) if exc.filename is not None else None
    where = display_path(path) if path is not None else folder
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "disk full" if exc.errno == errno.ENOSPC else "disk quota exceeded"
        space = _free(path.parent) if path is not None else ""
        return f"{what} while writing {where}{space}: {_KEPT}"
    if exc.errno in (errno.EACCES, errno.EPERM):
        if path is None:
            return f"permission denied writing to {folder} ({exc.strerror})"
        inside = data_dir is not None and (path == data_dir or data_dir in path.parents)
        hint = ", or set data_dir to a folder you can write" if inside else ""
        if not os.path.lexists(path):  # creating it was refused: its folder is the cause
            return (f"permission denied: cannot create files in {display_path(path.parent)}: "
                    "check the "
                    f"folder's owner and mode{hint}")
        return f"permission denied: {where}: check its owner and mode{hint}"
    if exc.errno == errno.EROFS:
        return f"read-only file system: cannot write {where}; set data_dir to a writable folder"
    if exc.errno == errno.ENOTDIR:
        return f"not a folder: {where} cannot be made: a file stands in its path"
    return None


def _free(folder: Path | None) -> str:
    """` (N MB free)` for the disk of `folder`, or nothing when that cannot be read."""
    import shutil

    if folder is None:
        return ""
    for place in (folder, *folder.parents):
        try:
            return f" ({shutil.disk_usage(place).free // 1_000_000:,} MB free)"
        except OSError:
            continue
    return ""


def _data_dir(ctx: click.Context) -> Path | None:
    """The invocation's data folder, when its settings were read."""
    cached = ctx.find_root().meta.get("fabtui.settings")
    folder = getattr(cached, "data_dir", None)
    return folder if isinstance(folder, Path) else None


def _cut(text: str) -> str:
    if len(text) <= MAX_MESSAGE_SHOWN:
        return text
    return f"{text[:MAX_MESSAGE_SHOWN]}... ({len(text) - MAX_MESSAGE_SHOWN:,} more characters)"


def _masked(ctx: click.Context, exc: Exception | str) -> str:
    """The exception's text with secrets masked: a bug's message may quote a value it was
    handed (a password in a command line, a token in a reply), and errors are an output path."""
    from fabtui.runbooks.redact import Redactor

    cached = ctx.find_root().meta.get("fabtui.settings")
    extra = tuple(cached.redact) if cached is not None else ()
    return Redactor(extra=extra).text(str(exc))
