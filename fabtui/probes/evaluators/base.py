"""What every evaluator is built on: its context, its type, and the registry that finds it.

One evaluator per output kind (a parser kind, or `nvml`), registered with `@evaluator(kind)`.
The registry is modelled on nornir's `PluginRegister` and fails loudly both ways: a second,
different function registered under a kind is a bug in the code and raises at import
(`EvaluatorAlreadyRegistered`, naming the kind and both functions), and output of a kind that
no evaluator judges raises `NoEvaluator` rather than yielding no metrics (which would make a
probe `ok` that nothing looked at). Evaluator modules import from here, never from
`fabtui.probes.evaluate`, which imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fabtui.errors import RequestError
from fabtui.model.probe import Metric, ProbeDef
from fabtui.probes.targets import ProbeTarget
from fabtui.topology.graph import FabricGraph


@dataclass(frozen=True)
class EvalContext:
    """What evaluators need besides the parse."""

    probe: ProbeDef
    target: ProbeTarget
    interval: float
    """Seconds between the two samples (counter probes)."""
    hardware: frozenset[str]
    """Hardware classes of the target (`H100`, `400G`, `NDR`, ...), for per-SKU thresholds."""
    graph: FabricGraph | None = None
    """The fabric, for evaluators that compare what they see with the topology (LLDP)."""
    command: str = ""
    """The command as it ran, for evaluators whose judgement depends on how (an NCCL test run
    with `NCCL_MNNVL_ENABLE=0` measures the network, not the NVLink domain)."""

    def component(self, detail: str | None = None) -> str:
        """`node001:mlx5_3`, `leaf-g00-r3:Ethernet8`, `node001:GPU2`, ... for `detail`."""
        t = self.target
        if t.kind == "nic" and t.node is not None and t.nic is not None:
            base = f"{t.node.hostname}:{t.nic.name}"
            return base if detail is None else f"{base}/{detail}"
        if t.switch is not None:
            if detail is not None:
                return f"{t.switch.name}:{detail}"
            return f"{t.switch.name}:{t.port}" if t.port else t.switch.name
        host = t.node.hostname if t.node is not None else t.name
        return host if detail is None else f"{host}:{detail}"


Evaluator = Callable[[Any, Any, EvalContext], list[Metric]]
"""(parse of the first sample or None, parse of the last sample, context) -> metrics."""


def _name(fn: Evaluator) -> str:
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{module}.{qualname}" if module else qualname


class EvaluatorAlreadyRegistered(RuntimeError):
    """A kind given a second, different evaluator (a bug in the code, raised at import)."""

    def __init__(self, kind: str, existing: Evaluator, new: Evaluator) -> None:
        self.kind = kind
        super().__init__(f"two evaluators claim output kind {kind!r}: {_name(existing)} "
                         f"(registered first) and {_name(new)}")


class NoEvaluator(RequestError):
    """Output of a kind no evaluator judges: the probe cannot have a verdict (never `ok`)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(f"no evaluator judges output of kind {kind!r}: nothing can say "
                         "whether it is healthy, so the probe has no verdict")


class EvaluatorRegister:
    """Evaluators by output kind."""

    def __init__(self) -> None:
        self.available: dict[str, Evaluator] = {}

    def register(self, kind: str, fn: Evaluator) -> None:
        """Register `fn` for `kind`; the same function again is a no-op, another one raises
        `EvaluatorAlreadyRegistered`."""
        existing = self.available.get(kind)
        if existing is None:
            self.available[kind] = fn
        elif existing is not fn:
            raise EvaluatorAlreadyRegistered(kind, existing, fn)

    def deregister(self, kind: str) -> None:
        """Forget the evaluator of `kind`; raises `NoEvaluator` if there is none."""
        self.get(kind)
        del self.available[kind]

    def get(self, kind: str) -> Evaluator:
        """The evaluator of `kind`; raises `NoEvaluator` if there is none."""
        try:
            return self.available[kind]
        except KeyError:
            raise NoEvaluator(kind) from None

    def kinds(self) -> list[str]:
        """Every kind with an evaluator, sorted."""
        return sorted(self.available)

    def __contains__(self, kind: object) -> bool:
        return kind in self.available


REGISTRY = EvaluatorRegister()
"""The evaluators of `fabtui.probes.evaluators` (importing that package fills it)."""


def evaluator(*kinds: str) -> Callable[[Evaluator], Evaluator]:
    """Register an evaluator for output kinds (parser kinds, or `nvml`) in `REGISTRY`."""
    def register(fn: Evaluator) -> Evaluator:
        for kind in kinds:
            REGISTRY.register(kind, fn)
        return fn

    return register
