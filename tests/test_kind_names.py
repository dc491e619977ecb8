"""A kind's pieces are named alike, so adding a kind is a recipe you can see
(docs/adding-a-kind.md).

For every kind the parser registry knows, with its stem (the kind with `-` as `_`):

- its parser is `fabtui/parsers/<stem>.py` (or the package `fabtui/parsers/<stem>/`);
- its result model (the parser's `MODEL`) is defined in `fabtui/model/parsed/<stem>.py`;
- its evaluator is the function `<stem>` of `fabtui/probes/evaluators/<stem>.py`, registered with
  `@evaluator("<kind>")`, unless `NO_EVALUATOR` says why nothing judges the kind;
- what the demo fabric prints for it is `fabtui/sim/programs/<stem>.py` (a node command, reached
  from `fabtui.sim.node_commands`) or the function `<stem>` of a switch CLI flavor module
  `fabtui/sim/switch_cli_<flavor>.py` that the flavor's `reply` calls, unless `NOT_SIMULATED`
  says why the demo does not print it.

And the other way round: a public module in those folders is named by a kind (what several
kinds share is in a private `_name.py`), and a switch CLI flavor's public functions are `reply`
or renderers named by a kind's stem (`<stem>` or `<stem>_<variant>`).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

import fabtui
import fabtui.probes.evaluators
import fabtui.sim.node_commands
from fabtui.parsers import registry
from fabtui.probes.evaluators.base import REGISTRY

ROOT = Path(fabtui.__file__).parent
"""The package folder, `fabtui/`."""

NO_EVALUATOR: dict[str, str] = {
    "flight-recorder": "evidence for hang triage, which reads every rank's dump together "
                       "(fabtui/triage); no probe reads one alone",
    "nccl-inspector": "a job's NCCL Inspector output, read over a window by the slow-job chain "
                      "(issue 39) with the job's other series; no probe reads one file alone",
    "ibswinfo": "read by `fabtui parse` only; no shipped probe runs ibswinfo.sh "
                "(tests/test_probe_evaluators_registry.py keeps it unjudged on purpose)",
    "sacct": "Slurm's view of a job, read for rank placement (`--job`, workspace/slurm.py)",
    "scontrol-job": "Slurm's view of a job, read for rank placement (`--job`, "
                    "workspace/slurm.py)",
    "squeue-json": "Slurm's view of a job, read for rank placement (`--job`, "
                   "workspace/slurm.py)",
    "switch-l1": "read by `fabtui parse` only; no shipped probe runs Cumulus `l1-show`",
    "training-log": "a training job's log, read over a window by the slow-job chain (issue 39) "
                    "for its step times; no probe runs a command that prints one",
    "slurm-topology": "Slurm's tree, judged whole against the fabric by `fabtui topo slurm "
                      "audit` (workspace/scheduler.py); no probe reads it",
}
"""Parser kinds no evaluator judges, and why."""

NOT_SIMULATED: dict[str, str] = {
    "flight-recorder": "dump files, not a command's output: the demo's hung jobs write them "
                       "(fabtui/sim/hangjob/artefacts.py) for hang triage to read",
    "ibswinfo": "the demo fabric has no unmanaged InfiniBand switch",
    "nccl-inspector": "files an NCCL plugin writes, not a command's output: the demo's job "
                      "serves them as series (issue 39)",
    "training-log": "a training job's own log, not a command's output: the demo's job serves "
                    "its step times as series (issue 39)",
    "nccl-triage": "fabtui's own report (`fabtui triage nccl --json`): on the demo, fabtui "
                   "prints it from the logs the simulated job writes",
    "switch-l1": "the demo's NVUE switches answer `nv show`; Cumulus `l1-show` is not "
                 "simulated",
    "slurm-topology": "the demo's Slurm answers for its job only; the tests start a real "
                      "slurmctld 22.05 for the tree (tests/support/slurm_server.py)",
    "queue-watermark": "buffer watermarks need a model of the switch's buffer occupancy, which "
                       "the simulator does not have yet (issue 35, Deliver 4 gap 8)",
}
"""Parser kinds the demo fabric does not print, and why."""

PARSER_MACHINERY = frozenset({"contract", "counter_table", "errors", "registry", "signatures",
                              "streaming", "text"})
"""Public modules of `fabtui/parsers/` that are not parsers."""

SWITCH_CLI_VALUES: dict[str, str] = {
    "reply": "a flavor's entry point: one command line in, the CLI's answer out",
    "queue_drops": "SONiC: what the PFC watchdog dropped on a lossless queue, a value the "
                   "exporter serves too, not a rendering",
}
"""Public functions of the switch CLI flavor modules that render no kind."""


def _stem(kind: str) -> str:
    return kind.replace("-", "_")


def _modules(package: str) -> list[str]:
    """The names of a package's modules and subpackages (none imported)."""
    module = importlib.import_module(package)
    return sorted(info.name for info in pkgutil.iter_modules(module.__path__))


def _flavors() -> dict[str, ModuleType]:
    """Switch CLI flavor modules by flavor (`sonic`: `fabtui.sim.switch_cli_sonic`)."""
    names = [n.removeprefix("switch_cli_") for n in _modules("fabtui.sim")
             if n.startswith("switch_cli_") and n != "switch_cli_common"]
    return {name: importlib.import_module(f"fabtui.sim.switch_cli_{name}") for name in names}


def _own_functions(module: ModuleType) -> dict[str, object]:
    return {name: fn for name, fn in inspect.getmembers(module, inspect.isfunction)
            if fn.__module__ == module.__name__}


KINDS = sorted(registry.parsers())
STEMS = {_stem(kind) for kind in KINDS}


def _parser_problems(kind: str) -> list[str]:
    stem = _stem(kind)
    parser = registry.parsers()[kind]
    found = ROOT / "parsers" / f"{stem}.py"
    package = ROOT / "parsers" / stem / "__init__.py"
    if parser.module_name != stem or not (found.exists() or package.exists()):
        return [f"the parser must be fabtui/parsers/{stem}.py (or the package "
                f"fabtui/parsers/{stem}/), not fabtui.parsers.{parser.module_name}"]
    if kind != parser.module.KIND:
        return [f"fabtui/parsers/{stem}.py must say KIND = {kind!r}, not "
                f"{parser.module.KIND!r}"]
    return []


def _model_problems(kind: str) -> list[str]:
    stem = _stem(kind)
    model = registry.parsers()[kind].model
    if model.__module__ != f"fabtui.model.parsed.{stem}" or \
            not (ROOT / "model" / "parsed" / f"{stem}.py").exists():
        return [f"its result model {model.__name__} must be defined in "
                f"fabtui/model/parsed/{stem}.py, not in {model.__module__}"]
    return []


def _evaluator_problems(kind: str) -> list[str]:
    stem = _stem(kind)
    if kind in NO_EVALUATOR:
        if kind in REGISTRY:
            return [f"it has an evaluator now: take it out of NO_EVALUATOR in {__name__}"]
        return []
    expected = f'@evaluator("{kind}") def {stem}(...) in fabtui/probes/evaluators/{stem}.py'
    if kind not in REGISTRY:
        return [f"no evaluator: expected {expected} (or list the kind in NO_EVALUATOR with "
                "the reason)"]
    fn = REGISTRY.get(kind)
    if fn.__module__ != f"fabtui.probes.evaluators.{stem}" or fn.__name__ != stem:
        return [f"its evaluator is {fn.__module__}.{fn.__name__}: expected {expected}"]
    return []


def _program_problems(kind: str) -> list[str]:
    stem = _stem(kind)
    program = ROOT / "sim" / "programs" / f"{stem}.py"
    renderers = [flavor for flavor, module in _flavors().items()
                 if stem in _own_functions(module)]
    printed = program.exists() or bool(renderers)
    if kind in NOT_SIMULATED:
        if printed:
            return [f"the demo prints it now: take it out of NOT_SIMULATED in {__name__}"]
        return []
    if not printed:
        return [f"the demo fabric does not print it: expected fabtui/sim/programs/{stem}.py "
                f"(a node command) or a function {stem}() in a switch CLI flavor module "
                "fabtui/sim/switch_cli_<flavor>.py (or list the kind in NOT_SIMULATED with "
                "the reason)"]
    problems = []
    if program.exists() and f"fabtui.sim.programs.{stem}" not in sys.modules:
        problems.append(f"fabtui/sim/programs/{stem}.py is not reached from "
                        "fabtui.sim.node_commands: add its command to _COMMANDS")
    for flavor in renderers:
        reply = _flavors()[flavor].reply
        if stem not in reply.__code__.co_names:
            problems.append(f"{stem}() of fabtui/sim/switch_cli_{flavor}.py is never called "
                            "by that flavor's reply()")
    return problems


@pytest.mark.parametrize("kind", KINDS)
def test_a_kinds_parser_model_evaluator_and_demo_program_are_named_by_its_stem(
        kind: str) -> None:
    problems = [*_parser_problems(kind), *_model_problems(kind), *_evaluator_problems(kind),
                *_program_problems(kind)]
    assert not problems, f"kind {kind!r}:\n  " + "\n  ".join(problems)


def test_the_exceptions_name_real_kinds_with_a_reason() -> None:
    for table in (NO_EVALUATOR, NOT_SIMULATED):
        assert set(table) <= set(KINDS), f"not kinds: {sorted(set(table) - set(KINDS))}"
        assert all(reason.strip() for reason in table.values())


def test_an_evaluator_that_judges_no_parser_kind_is_named_by_its_kind_too() -> None:
    # `nvml`: the NVML transport's snapshot, parsed by no parser.
    problems = []
    for kind in REGISTRY.kinds():
        fn, stem = REGISTRY.get(kind), _stem(kind)
        if fn.__module__ != f"fabtui.probes.evaluators.{stem}" or fn.__name__ != stem:
            problems.append(f"kind {kind!r}: its evaluator is {fn.__module__}.{fn.__name__}, "
                            f'expected @evaluator("{kind}") def {stem}(...) in '
                            f"fabtui/probes/evaluators/{stem}.py")
    assert not problems, "\n".join(problems)


def test_every_public_module_is_named_by_a_kind_and_shared_ones_are_private() -> None:
    evaluated = {_stem(kind) for kind in REGISTRY.kinds()}
    problems = []
    for name in _modules("fabtui.parsers"):
        if name.startswith("_"):
            # a reader of one kind (`_<stem>_<flavor>`) or shared by several (`_<what>_common`)
            if not (name.endswith("_common") or any(name.startswith(f"_{s}_") for s in STEMS)):
                problems.append(f"fabtui/parsers/{name}.py: a private module is a reader "
                                "named _<stem>_<flavor>.py or a shared _<what>_common.py")
        elif name not in STEMS and name not in PARSER_MACHINERY:
            problems.append(f"fabtui/parsers/{name}.py: not named by a kind's stem (a parser "
                            "module is named by its KIND, `-` as `_`, and listed in "
                            "fabtui/parsers/signatures.py)")
    for folder, allowed, what in (("fabtui.model.parsed", STEMS, "a parser kind's"),
                                  ("fabtui.probes.evaluators", evaluated | {"base"},
                                   "an evaluated kind's"),
                                  ("fabtui.sim.programs", STEMS, "a parser kind's")):
        for name in _modules(folder):
            if not name.startswith("_") and name not in allowed:
                path = folder.replace(".", "/")
                problems.append(f"{path}/{name}.py: not {what} stem; name it by its kind, or "
                                f"make it private (_{name}.py) if several kinds share it")
    for name in _modules("fabtui.probes.evaluators"):
        if name.startswith("_") or name == "base":
            continue
        registered = {k for k in REGISTRY.kinds()
                      if REGISTRY.get(k).__module__ == f"fabtui.probes.evaluators.{name}"}
        if {_stem(k) for k in registered} != {name}:
            problems.append(f"fabtui/probes/evaluators/{name}.py registers {sorted(registered)}: "
                            f"one module per kind, this one for {name.replace('_', '-')!r}")
    assert not problems, "\n".join(problems)


def test_switch_cli_flavors_name_each_renderer_by_the_kind_it_prints() -> None:
    problems = []
    for flavor, module in _flavors().items():
        for name in _own_functions(module):
            if name.startswith("_") or name in SWITCH_CLI_VALUES:
                continue
            if not any(name == s or name.startswith(f"{s}_") for s in STEMS):
                problems.append(f"fabtui/sim/switch_cli_{flavor}.py: {name}() renders no "
                                "kind: name it <stem> or <stem>_<variant> after the kind it "
                                "prints, or make it private")
    assert not problems, "\n".join(problems)
