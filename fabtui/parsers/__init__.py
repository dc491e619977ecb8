"""Parsers: pure functions from tool output text to typed results (`fabtui.model.parsed`).

Each module in this package that defines `KIND` is a parser. It provides:

- `KIND`: the output kind, e.g. `"nccl-tests"` (the `kind` field of its results);
- `MODEL`: the pydantic model of its results;
- `DESCRIPTION`: one line, shown by `fabtui parse --list`;
- `detect(text) -> float`: how sure it is (0..1) that `text` is its kind; must be cheap (look at
  the head of the text) and must never raise;
- `parse(text) -> MODEL`: the result, or `ParseError` (never any other exception);
- optionally `table(result) -> str`: a readable table for `fabtui parse --table`.

Parsers import only the model and `fabtui.parsers.*` helpers; never transports.
"""
