"""Runbooks as executable markdown: reading, expressions, lint, the engine, and runbook tests."""
