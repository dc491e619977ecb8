"""Which errors of a probe run mean "the evidence cannot tell", and which are bugs.

Triage runs probes through whatever runs them (`Workspace.run_probe`) and reports a probe it
could not run as an `unknown` link or a failed run, with the reason. That is a fact about the
fabric only when the error is one: a refused request (an unknown probe, target or parameter:
`RequestError`), an unreadable input (`InputError`), a component that does not exist
(`LookupError` such as `TargetError` or `UnknownRank`), a device that cannot be reached
(`OSError`: refused or dropped connections). Anything else, and a bare `KeyError` or
`IndexError` (a lookup in the code, not in the fabric), is a bug and must surface.
"""

from __future__ import annotations

from fabtui.errors import InputError, RequestError

CANNOT_TELL: tuple[type[Exception], ...] = (RequestError, InputError, LookupError, OSError)
"""What a probe run raises when it could not look (catch these, then re-raise `is_bug` ones)."""

_BUGS = (KeyError, IndexError)


def is_bug(exc: BaseException) -> bool:
    """A plain `KeyError` / `IndexError`: a lookup in the code gone wrong, not a component
    missing from the fabric (which raises its own kind of `LookupError`)."""
    return type(exc) in _BUGS
