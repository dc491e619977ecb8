"""The command line. `main` is the `fabtui` console script."""

from fabtui.cli.app import cli, main

__all__ = ["cli", "main"]
