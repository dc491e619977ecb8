"""`dcgmi diag -r <level|tests>`: DCGM diagnostic results per test (and per GPU)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabtui.model.parsed import ParsedOutput


class DcgmiDiag(ParsedOutput):
    """Per-test results; the verdict is derived from every test, never from a summary alone."""

    kind: Literal["dcgmi-diag"] = "dcgmi-diag"
    overall: Literal["pass", "fail", "warn"]
    """`fail` if any test failed, an `Error` row was printed or a summary says it failed;
    else `warn` if any test warned or no test passed (all skipped); else `pass`."""
    level: str | None = None
    """The `-r` argument (`1`..`4`, `long`, or test names) when the command line is captured."""
    dcgm_version: str | None = None
    """`DCGM Version` from the Metadata section (DCGM 3.x and newer)."""
    driver_version: str | None = None
    """`Driver Version Detected` from the Metadata section."""
    gpu_device_ids: list[str] = Field(default_factory=list)
    """`GPU Device IDs Detected`, one PCI device id per GPU, as printed (e.g. `20b2`)."""
    metadata: dict[str, str] = Field(default_factory=dict)
    """Every Metadata row, name -> value as printed."""
    sections: dict[str, list[str]] = Field(default_factory=dict)
    """Section (`Deployment`, `Integration`, `Hardware`, `Stress`, ...) -> test names in printed
    order; a section printed without rows is present with an empty list."""
    tests: dict[str, str]
    """Test name as printed (`GPU Memory`, `memory`, `Denylist`) -> `pass` / `fail` / `warn` /
    `skip` / `not_run`: the worst of its result lines (`Pass - GPUs: 1, 2` + `Fail - GPU: 0`
    is `fail`)."""
    details: dict[str, list[str]] = Field(default_factory=dict)
    """Test name -> its `Warning` / `Error` / `Info` messages, each prefixed with the row name
    (`Warning: ...`) and with the text that the tool wraps across rows joined again."""
    failed_gpus: dict[str, list[int]] = Field(default_factory=dict)
    """Test name -> GPU indices that failed it (from `Fail - GPU: 0` / `GPU0: Fail`; for a failed
    test without a GPU list, the GPUs its messages name)."""
    gpu_results: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Test name -> GPU index -> normalised result, where the output lists GPUs (`Pass - GPUs:
    1, 2`, or the per-GPU `GPU0: Pass` lines of DCGM 4)."""
    errors: list[str] = Field(default_factory=list)
    """`Error`/`Warning` messages that belong to no test row (e.g. in a published fragment that
    starts at the message), and error lines printed outside the table."""
    summary: str | None = None
    """A printed overall verdict (`Result: Pass`, `Passed all N runs`, `Aborting ...`),
    normalised to `pass` / `fail`; informative only, `overall` does not rest on it."""
