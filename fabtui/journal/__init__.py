"""The session journal: append-only, crash-safe records of runbook sessions."""
