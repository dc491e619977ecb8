"""Who is at the keyboard, as the journal records an operator's action (a runbook session's
operator, who closed an incident)."""

from __future__ import annotations

import getpass


def operator_name() -> str:
    """The login name; `operator` where the system cannot say (no passwd entry in a
    container)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "operator"
