"""What the tests share and are not tests themselves: real servers started on loopback (sshd,
Prometheus), the fork server for `fabtui` commands, helpers for the app, the simulated fabric
and the case library, and scripts the tests run as processes (the fake switch CLI).

Imported one way only, from the repository root: `from tests.support.tui_support import ...`.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository's root folder (the one holding `fabtui` and `tests`)."""
