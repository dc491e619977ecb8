"""Shared fixtures: the shipped fabrics, a CLI runner, a writer for throw-away topology files."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fabtui.cli import cli
from fabtui.paths import demo_topology, shipped_dir, shipped_templates
from fabtui.workspace.simfabric import IN_PROCESS_VAR
from tests.support import REPO

SPREAD = frozenset({
    "test_runbook_library.py", "test_parse_streaming.py", "test_docs.py", "test_hostile_input.py",
    "test_tui_runbooks.py", "test_tui_journeys.py", "test_tui_cases.py", "test_tui_console.py",
    "test_tui_triage.py", "test_tui_tmux.py", "test_tui_app.py", "test_tui_live.py",
    "test_tui_report.py", "test_tui_typeahead.py", "test_report_truth.py",
    "test_alerts_live.py", "test_alerts_live_more.py",
})
"""Files whose tests are long and independent (each its own scratch folders, no module-scoped
fixture): pytest-xdist hands them out one test at a time. Every other file's tests stay
together on one worker, as `--dist loadfile` keeps them, so a module-scoped fixture (an sshd,
a built wheel, a simulated job) is built once. One file of long tests on one worker was the
suite's tail: the runbook cases alone are a third of its time."""

FIRST = (
    "test_tui_journeys.py", "test_docs.py", "test_prom_live.py",
    "test_alerts_live.py", "test_alerts_live_more.py", "test_tui_typeahead.py",
    "test_reports.py",
    "test_tui_tmux.py", "test_runbook_library.py", "test_tui_runbooks.py", "test_tui_triage.py",
    "test_tui_cases.py", "test_tui_console.py", "test_hostile_input.py", "test_tui_live.py",
    "test_transport_cli.py", "test_tui_report.py", "test_triage_on_simulated_hangs.py",
    "test_import_hygiene.py", "test_sim_inprocess_cli.py",
    "test_probe_fanout.py", "test_parsers_fuzz.py", "test_parser_signatures.py",
    "test_prom_bad.py", "test_tui_picture.py", "test_transport_ssh.py", "test_fabtui_fork.py",
)
"""The files whose work units take longest (single tests of 10-25 s, or a module fixture and
its tests), longest first: they are handed out before the rest, so the suite ends on short
units and not with one worker alone on a long one. A scheduling hint only, from the
`--durations` of a full run: a file missing here runs all the same, after these. (The alert
tests, 25-55 s each, mostly wait on a Prometheus and an Alertmanager of their own: early, but
not in the first batch, where all four workers would wait on them at once and leave a core
idle: taken as workers come free, their waiting overlaps the others' computing.)"""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers more than the machine has cores.

    A part of the suite's test time is waiting, not computing (tmux panes drawn, Prometheus
    scraping, servers starting, pipes to child processes, latencies of the simulated fabric):
    with one worker per core that time left a core idle (2 cores: 226 s with 2 workers,
    199 s with 3). With 3 workers the cores still idled 35 core-s a run; with 4, 10 (the same
    tests, busy time the same within the machine's noise).
    """
    return (os.cpu_count() or 1) + 2


def pytest_configure(config: pytest.Config) -> None:
    """Compile fabtui's modules once, before any worker or child process imports them.

    With `PYTHONDONTWRITEBYTECODE` set (as on CI's machine) no bytecode is ever written, so
    each of the hundreds of `fabtui` processes the tests start compiled every module it
    imports again: 0.46 s for a one-probe command, 0.35 s with the bytecode there.
    `compileall` writes it regardless, into the ignored `__pycache__` folders.
    """
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        import compileall

        compileall.compile_dir(REPO / "fabtui", quiet=2, workers=1)
        _rewrite_test_modules_once(config)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep the garbage collector off what a worker holds for the whole run.

    Each worker holds every module it imported and every collected test: ~170 ms for each
    full collection to walk again, and the runbook, app and case tests (which make many
    short-lived objects) triggered one every few seconds: 44 in one worker's share, with the
    young generations ~10 s of ~57 CPU-s. Frozen after collection, and young collections
    less often (5000 allocations, not 700; a full one after 50 of the middle one's, not 10),
    the same share spent 3.5 s. Cyclic garbage is still collected, only later; the fabtui
    processes the tests start keep Python's defaults.
    """
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(5000, 10, 50)


def _rewrite_test_modules_once(config: pytest.Config) -> None:
    """Write pytest's assertion-rewritten bytecode of every test module before the workers
    start, on every core, so that each worker reads it instead of rewriting every module.

    Without bytecode writing (`PYTHONDONTWRITEBYTECODE`, as on CI) each worker rewrote the
    asserts of all 122 test modules while collecting (60 % of its collection, 4 s of CPU),
    and of the plugins' packages (hypothesis: 73 modules). Uses pytest's own rewriting
    (`_pytest.assertion.rewrite`, internal: a pytest that renamed it just rewrites in each
    worker again, as before).
    """
    if config.getvalue("assertmode") != "rewrite" or not config.getvalue("numprocesses"):
        return
    try:
        from _pytest.assertion import rewrite
        state = config.stash[rewrite.assertstate_key]
        if state.hook is None:  # no import hook: nothing is rewritten
            return
        # and the modules of the plugins' packages, which pytest rewrites too
        plugins = [path for name in state.hook._must_rewrite for path in _sources(name)]
        files = sorted({*(REPO / "tests").glob("test_*.py"), REPO / "tests" / "conftest.py",
                        *plugins})
        stale = [fn for fn in files
                 if rewrite._read_pyc(fn, _rewritten_pyc(rewrite, fn)) is None]
    except (ImportError, AttributeError, KeyError):
        return
    if not stale:
        return
    stale = [fn for fn in stale if rewrite.try_makedirs(rewrite.get_cache_dir(fn))]
    cores = max(1, min(os.cpu_count() or 1, len(stale)))
    children = []
    for part in range(1, cores):  # the other cores' shares in forked children
        pid = os.fork()
        if pid == 0:
            try:
                _rewrite(rewrite, state, config, stale[part::cores])
            finally:
                os._exit(0)
        children.append(pid)
    _rewrite(rewrite, state, config, stale[0::cores])
    for pid in children:
        os.waitpid(pid, 0)


def _sources(name: str) -> list[Path]:
    """The source files of module or package `name` (none if it is not a plain one)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return []
    folders = spec.submodule_search_locations
    if not folders:
        return [Path(spec.origin)]
    return [path for folder in folders for path in Path(folder).rglob("*.py")]


def _rewritten_pyc(rewrite: Any, fn: Path) -> Path:
    cache: Path = rewrite.get_cache_dir(fn)
    tail: str = rewrite.PYC_TAIL
    return cache / (fn.name[:-3] + tail)


def _rewrite(rewrite: Any, state: Any, config: pytest.Config, files: list[Path]) -> None:
    for fn in files:
        source_hash, code = rewrite._rewrite_test(fn, config)
        rewrite._write_pyc(state, code, source_hash, _rewritten_pyc(rewrite, fn))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the tests' fork server (tests/support/fabtui_fork.py) if this process started one: no
    process outlives the session. (It would exit anyway once this process is gone.)"""
    import sys

    fork = sys.modules.get("tests.support.fabtui_fork")
    if fork is not None:
        fork.close()


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`--dist loadfile`, except that the tests of the `SPREAD` files are handed out one by one,
    and the units of the `FIRST` files before all others.

    (A scheduler of our own: pytest 9 ignores the test-id suffix `--dist loadgroup` relies on.)
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    rank = {name: i for i, name in enumerate(FIRST)}

    class _Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return nodeid if Path(path).name in SPREAD else path

        def _assign_work_unit(self, node: object) -> None:
            # xdist takes the queue's first unit; the earliest-ranked one is moved there
            # (ties keep xdist's own order: most tests first).
            first = min(self.workqueue, key=lambda scope: rank.get(
                Path(scope.split("::", 1)[0]).name, len(FIRST)))
            self.workqueue.move_to_end(first, last=False)
            super()._assign_work_unit(node)

    return _Scheduling(config, log)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory: pytest.TempPathFactory,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's own ~/.config/fabtui or FABTUI_CONFIG."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.delenv("FABTUI_CONFIG", raising=False)
    monkeypatch.delenv("FABTUI_DEBUG", raising=False)
    monkeypatch.delenv("FABTUI_SIM_STATE", raising=False)
    monkeypatch.delenv("FABTUI_SIM_TIME", raising=False)
    monkeypatch.delenv(IN_PROCESS_VAR, raising=False)


@pytest.fixture
def sim_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo fabric answers in the test's process (`IN_PROCESS_VAR`): for tests of what sits
    above the transport, which would otherwise start a device client process per command
    (~40 ms of CPU each). The transport itself is tested on the process path, and the app
    end to end in tmux, where the variable is never set."""
    monkeypatch.setenv(IN_PROCESS_VAR, "1")


@pytest.fixture
def demo() -> Path:
    return demo_topology()


@pytest.fixture
def faulty() -> Path:
    return shipped_dir("topology") / "examples" / "faulty.yaml"


@pytest.fixture
def template() -> Callable[[str], Path]:
    return lambda name: shipped_templates() / f"{name}.yaml"


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write dedented text to a file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def run() -> Callable[..., Result]:
    """Invoke the fabtui CLI in-process; stdout and stderr are kept apart."""
    runner = CliRunner()

    def _run(*args: str) -> Result:
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return _run
