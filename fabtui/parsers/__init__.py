"""Parsers: pure functions from tool output text to typed results (`fabtui.model.parsed`).

Each module in this package that defines `KIND` is a parser. It provides:

- `KIND`: the output kind, e.g. `"nccl-tests"` (the `kind` field of its results);
- `MODEL`: the pydantic model of its results (nccl-log resolves it on first access: its
  streamed path writes plain data and never imports pydantic);
- `DESCRIPTION`: one line, shown by `fabtui parse --list`;
- `detect(text) -> float`: how sure it is (0..1) that `text` is its kind; must be cheap (look at
  the head of the text) and must never raise;
- `parse(text) -> MODEL`: the result, or `ParseError` (never any other exception);
- optionally `tables(result) -> list[fabtui.model.table.Table]`: the result as tables of values
  (columns with names and alignment, rows, summary lines), drawn by `fabtui.render.table` for
  `fabtui parse --table` and reused by the TUI. Parsers never pad text to widths themselves
  (tests/test_parsers_tables.py checks).

Parsers import only the model and `fabtui.parsers.*` helpers; never transports.

A new parser also gets a row in `fabtui.parsers.signatures` (kind, module, description and the
signature its detector needs to score at all), so that commands import it only when used;
tests/test_parser_signatures.py fails until the row exists and holds for every fixture.
"""
