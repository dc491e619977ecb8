"""How every search names the words it did not know: one sentence for case search, `runbook
find` and the app's status lines."""

from __future__ import annotations

from collections.abc import Sequence


def no_match(unknown: Sequence[tuple[str, str | None]]) -> str | None:
    """`no match for 'optik'; did you mean optic?` for the words a search did not know (each
    with the closest word it does know, or None); None when it knew them all."""
    if not unknown:
        return None
    return "; ".join(f"no match for {word!r}" + (f"; did you mean {close}?" if close else "")
                     for word, close in unknown)
