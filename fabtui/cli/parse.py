"""`fabtui parse`: any supported tool output in, typed JSON (or a table) out."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from fabtui.cli.context import EXIT_BAD_INPUT
from fabtui.errors import InputError
from fabtui.parsers import registry
from fabtui.parsers.errors import ParseError
from fabtui.parsers.streaming import FileLines, Plain, Streamed, read_lines, write_json
from fabtui.parsers.text import normalize

if TYPE_CHECKING:
    from pydantic import BaseModel


def _generic_table(data: dict[str, object], width: int | None) -> str:
    """A key/value listing of a result, for kinds without a table of their own."""
    from fabtui.cli.render import table as render_table
    rows: list[tuple[str, str]] = []

    def walk(prefix: str, value: object) -> None:
        if isinstance(value, dict):
            for key, sub in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), sub)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for i, sub in enumerate(value):
                walk(f"{prefix}[{i}]", sub)
        else:
            rows.append((prefix, json.dumps(value) if not isinstance(value, str) else value))

    walk("", data)
    return render_table(("field", "value"), rows, width)


def _terminal_width() -> int | None:
    """Columns of the terminal, or None when output goes to a pipe or file (nothing is cut)."""
    import shutil

    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def _read(file: str) -> tuple[str, str]:
    """(name for messages, normalised text) of FILE or standard input; bad files exit 2."""
    if file == "-":
        data = sys.stdin.buffer.read()
        return "<stdin>", normalize(data.decode("utf-8", errors="replace"))
    try:
        with open(file, "rb") as handle:
            return file, normalize(handle.read().decode("utf-8", errors="replace"))
    except OSError as exc:
        raise InputError.single(file, None, f"cannot read: {exc.strerror}") from None


def _parse_streamed(file: str, kind: str) -> tuple[str, Streamed[Any] | Plain[Any]]:
    """(name for messages, result) of FILE read line by line by the parser of `kind`.

    Neither the text nor the biggest lists of the result are ever held whole, so memory stays
    bounded on captures of any size. Raises `ParseError` (a failing parser included).
    """
    parse_lines = registry.get(kind).module.parse_lines
    try:
        handle = (contextlib.nullcontext(sys.stdin.buffer) if file == "-"
                  else open(file, "rb"))  # noqa: SIM115 - closed by the `with` below
    except OSError as exc:
        raise InputError.single(file, None, f"cannot read: {exc.strerror}") from None
    name = "<stdin>" if file == "-" else file
    try:
        with handle as binary:
            lines = FileLines(file) if file != "-" and os.path.isfile(file) \
                else read_lines(binary)
            streamed: Streamed[BaseModel] | Plain[BaseModel] = parse_lines(lines)
    except ParseError:
        raise
    except OSError as exc:
        raise InputError.single(file, None, f"cannot read: {exc.strerror}") from None
    except Exception as exc:  # a parser bug on this input: a readable error, as the registry
        raise ParseError(kind, None, f"parser failed: {type(exc).__name__}: {exc}") from exc
    return name, streamed


@click.command("parse")
@click.argument("file", required=False)
@click.option("--as", "kind", metavar="KIND", help="Parse as this kind instead of guessing.")
@click.option("--table", "as_table", is_flag=True, help="Print a readable table, not JSON.")
@click.option("--list", "list_kinds", is_flag=True, help="List the kinds fabtui can parse.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON (the default for a parse; with --list, the kinds as JSON).")
@click.pass_context
def parse_command(ctx: click.Context, file: str | None, kind: str | None, as_table: bool,
                  list_kinds: bool, as_json: bool) -> None:
    """Parse the output of a supported tool (FILE, or - for standard input) into JSON.

    The kind is detected unless --as names it. Unknown or truncated input is an error naming
    the kind it looked like and the line where reading failed (exit 2).
    """
    if as_json and as_table:
        raise click.UsageError("--json and --table exclude each other")
    if list_kinds and as_json:
        click.echo(json.dumps([{"kind": k, "description": p.description} for k, p in
                               sorted(registry.parsers().items())], indent=2))
        return
    if list_kinds:
        from fabtui.cli.render import table as render_table

        click.echo(render_table(("kind", "what"), [(k, p.description) for k, p in
                                                   sorted(registry.parsers().items())]))
        return
    if file is None:
        raise click.UsageError("give a FILE to parse, or - for standard input")
    streams = kind is not None and kind in registry.parsers() \
        and hasattr(registry.get(kind).module, "parse_lines")
    name = "<stdin>" if file == "-" else file
    if not streams:
        name, text = _read(file)
        if kind is not None and kind not in registry.parsers():
            click.echo(f"fabtui: unknown kind {kind!r}; see `fabtui parse --list`", err=True)
            ctx.exit(EXIT_BAD_INPUT)
    try:
        if streams:
            assert kind is not None
            name, streamed = _parse_streamed(file, kind)
        else:
            streamed = Streamed(registry.parse(text, kind))
            text = ""  # the result is what is written: the capture's text need not stay
    except ParseError as exc:
        where = f"{name}:{exc.line}" if exc.line is not None else name
        looked = f" (input looked like {exc.kind})" if exc.kind else ""
        click.echo(f"{where}: {exc.message}{looked}", err=True)
        ctx.exit(EXIT_BAD_INPUT)
    if not as_table:
        write_json(streamed, sys.stdout)
        return
    # The table writers load only here: a parse to JSON (a 100 MB log, say) never needs them.
    from fabtui.render.table import render_tables

    result = streamed.assemble()
    data = result.model_dump(mode="json")
    width = _terminal_width()
    own = registry.get(data["kind"]).tables(result)
    click.echo(render_tables(own, width) if own is not None else _generic_table(data, width))
