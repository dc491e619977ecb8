"""The simulator's shared state, and the layer every other one stands on: the faults as resolved,
determinism, and the cabling as it really is.

`SimBase` is the bottom of `Sim`'s layers (core.py composes them; links.py, optics.py, pfc.py
and traffic.py each add one): it builds the state they all read and the caches they fill, so
the whole of a simulation's state is set up in one place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from collections.abc import Sequence
from typing import NamedTuple

from fabtui.model.element import device_of, split_key
from fabtui.model.topology import Topology
from fabtui.sim import physics
from fabtui.sim.faults import Fault, resolve_all
from fabtui.sim.scenario import FaultKind, FaultSpec, Scenario
from fabtui.topology.graph import FabricGraph

INF = math.inf
DEFAULT_EPOCH = 1_795_996_800.0
"""2026-11-30 00:00:00 UTC: t=0 when no state file says when the scenario started."""


class SimBase:
    """The state of a topology playing a scenario, and the look-ups every layer uses.

    Writes (at construction): `topology`, `epoch`, `scenario`, `seed`, `graph`, `faults`,
    `_repairs`, `_shut`, `_cleared` (NIC counter clears), `_by_link` and `_breakpoints` (the
    fault and shut edges; `Sim` adds the ones the upper layers know), and every layer's
    caches, empty. Reads and fills `_cablings` (the real cabling) and `_ports` (each switch's
    cabled ports)."""

    def __init__(self, topology: Topology, scenario: Scenario, *, seed: int,
                 extra: Sequence[FaultSpec], source: str, lines: list[int | None] | None,
                 epoch: float, repairs: Sequence[tuple[str, float]],
                 shut: Sequence[tuple[str, float, float | None]],
                 cleared: Sequence[tuple[str, float]] = ()) -> None:
        self.topology = topology
        self.epoch = epoch
        """Wall-clock time (Unix seconds) of the scenario's t=0, for log timestamps."""
        self.scenario = scenario
        self.seed = seed
        self.graph = FabricGraph(topology)
        self.faults: list[Fault] = [self._repaired(f, repairs) for f in resolve_all(
            self.graph, [*scenario.timeline, *extra], source, lines)]
        self._repairs: dict[int, list[tuple[str, float]]] = {}
        """Link -> the repairs done on it (a swapped optic reports a new serial)."""
        for component, at in repairs:
            repaired = self.link_of(component)
            if repaired is not None:
                self._repairs.setdefault(repaired, []).append((component, at))
        self._shut: dict[int, list[tuple[float, float]]] = {}
        """Links whose switch port an operator shut, with when (admin down)."""
        for endpoint, start, end in shut:
            link = self.link_of(endpoint)
            if link is not None:
                self._shut.setdefault(link, []).append((start, INF if end is None else end))
        self._cleared: dict[str, list[float]] = {}
        """NIC (`node:nic`) -> when an operator cleared its counters (`mlxlink --pc`)."""
        for endpoint, at in cleared:
            self._cleared.setdefault(endpoint, []).append(at)
        self._by_link: dict[int, list[Fault]] = {}
        for fault in self.faults:
            if fault.link is not None:
                self._by_link.setdefault(fault.link, []).append(fault)
            elif fault.kind is FaultKind.SWITCH_DOWN and fault.switch is not None:
                for link in self.graph.switch_links(fault.switch):
                    self._by_link.setdefault(link, []).append(fault)
        for link in self._shut:
            self._by_link.setdefault(link, [])
        edges = {f.spec.at for f in self.faults} | \
            {f.spec.until for f in self.faults if f.spec.until is not None}
        edges |= {edge for windows in self._shut.values() for window in windows
                  for edge in window if edge != INF}
        self._breakpoints = sorted(edges)
        # Caches, empty until the layer that reads each fills it. This one:
        self._cablings: dict[tuple[int, ...], Cabling] = {}
        self._ports: dict[str, list[str]] | None = None
        # links.py:
        self._windows: dict[int, list[tuple[float, float]]] = {}
        self._window_indexes: dict[int, tuple[list[float], list[float]]] = {}
        self._uplinks: dict[str, list[int]] = {}
        self._host_link: dict[int, bool] = {}
        self._leaf: dict[int, str | None] = {}
        # optics.py, pfc.py and traffic.py:
        self._steady: dict[tuple[int, str], tuple[float, physics.FecRates]] = {}
        self._cycles: dict[int, list[tuple[str, str, int]]] = {}
        self._failure: tuple[tuple[float, int] | None] | None = None

    def last_clear(self, host: str, nic: str, t: float) -> float | None:
        """When the counters of `host:nic` were last cleared at or before `t`; None: never
        (they count from the scenario's start)."""
        return max((at for at in self._cleared.get(f"{host}:{nic}", ()) if at <= t),
                   default=None)

    def link_of(self, component: str) -> int | None:
        """The link of a switch port, a NIC (`node:mlx5_N`) or an optic id."""
        if component in self.graph.optics:
            return self.graph.optics[component]
        if component in self.graph.port_links:
            return self.graph.port_links[component]
        device, port = split_key(component)
        nic = self.graph.find_nic(device, port)
        attachment = self.graph.attachments.get((device, nic.name)) if nic else None
        return attachment.link_index if attachment else None

    def _repaired(self, fault: Fault, repairs: Sequence[tuple[str, float]]) -> Fault:
        """`fault` ended at the first repair of its component (or of its link) after it began."""
        for component, at in repairs:
            same = component == fault.spec.component or component == fault.host or (
                fault.link is not None and self.link_of(component) == fault.link)
            if same and fault.spec.at <= at and (fault.spec.until is None or
                                                 at < fault.spec.until):
                return dataclasses.replace(fault, spec=fault.spec.model_copy(
                    update={"until": at}))
        return fault

    # determinism ------------------------------------------------------------------------------
    def noise(self, *key: object) -> float:
        """A stable pseudo-random number in [0, 1) for `key` (and this seed)."""
        digest = hashlib.blake2b(repr((self.seed, *key)).encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64

    def base(self, *key: object, scale: float = 1e9) -> int:
        """A counter's value before the scenario began (devices have been up for a while)."""
        return int(self.noise("base", *key) * scale)

    # faults ----------------------------------------------------------------------------------
    def active(self, kind: FaultKind, t: float) -> list[Fault]:
        """Faults of `kind` in effect at `t`."""
        return [f for f in self.faults if f.kind is kind and f.active(t)]

    def switch_dead(self, switch: str, t: float) -> bool:
        """True while a `switch-down` fault has `switch` dead (it answers nothing)."""
        return any(f.switch == switch for f in self.active(FaultKind.SWITCH_DOWN, t))

    def breakpoints(self) -> list[float]:
        """Times at which some fault starts or ends."""
        return self._breakpoints

    def switch_ports(self, switch: str) -> list[str]:
        """The cabled ports of `switch`, in the order the switch lists them (natural order)."""
        if self._ports is None:
            found: dict[str, list[str]] = {}
            keys = list(self.graph.port_links)
            for fault in self.faults:  # the ports cabling faults plug a cable into
                if fault.kind in (FaultKind.MISCABLED, FaultKind.CABLE_EXTRA):
                    keys.append(f"{fault.switch}:{fault.port}")
                if fault.kind is FaultKind.CABLE_EXTRA and fault.partner:
                    keys.append(fault.partner)
            for key in dict.fromkeys(keys):
                device, port = split_key(key)
                if device in self.graph.switches:
                    found.setdefault(device, []).append(port)
            self._ports = {name: sorted(names, key=_natural) for name, names in found.items()}
        return self._ports.get(switch, [])

    # cabling ---------------------------------------------------------------------------------
    def _cabling_for(self, t: float | None) -> Cabling:
        """The real cabling at `t` (None: with every cabling fault ever planted): swapped,
        moved and missing NIC cables and extra switch cables. A re-cabled swap (a repair)
        undoes itself."""
        planted = tuple(i for i, f in enumerate(self.faults)
                        if f.kind in CABLING_FAULTS and (t is None or f.active(t)))
        cached = self._cablings.get(planted)
        if cached is not None:
            return cached
        designed = {key: f"{a.switch}:{a.port}" for key, a in self.graph.attachments.items()}
        actual: dict[tuple[str, str], str | None] = dict(designed)
        extra: dict[str, str] = {}
        for index in planted:
            fault = self.faults[index]
            if fault.kind is FaultKind.RANK_MAPPING and fault.host and fault.nic and \
                    fault.partner:
                one, other = (fault.host, fault.nic), (fault.partner_host or fault.host,
                                                       fault.partner)
                actual[one], actual[other] = actual[other], actual[one]
            elif fault.kind is FaultKind.MISCABLED and fault.host and fault.nic:
                actual[(fault.host, fault.nic)] = f"{fault.switch}:{fault.port}"
            elif fault.kind is FaultKind.CABLE_MISSING and fault.host and fault.nic:
                actual[(fault.host, fault.nic)] = None
            elif fault.kind is FaultKind.CABLE_EXTRA and fault.partner:
                near = f"{fault.switch}:{fault.port}"
                extra[near], extra[fault.partner] = fault.partner, near
        landed = {where: key for key, where in actual.items() if where is not None}
        vacated = frozenset(where for where in designed.values() if where not in landed)
        moved = tuple((key[0], key[1], device_of(designed[key]), device_of(where or ""))
                      for key, where in actual.items() if where != designed[key])
        found = Cabling(actual, landed, vacated, extra, moved)
        self._cablings[planted] = found
        return found

    def actual_port(self, host: str, nic: str, t: float | None = None) -> str | None:
        """Where the cable of `host:nic` really lands (`switch:port`) at `t`; None: no cable."""
        return self._cabling_for(t).actual.get((host, nic))

    def moved_nics(self, t: float | None = None) -> tuple[tuple[str, str, str, str], ...]:
        """(host, NIC, designed switch, real switch or '') of every NIC cabled elsewhere than
        the topology says at `t`."""
        return self._cabling_for(t).moved

    def neighbor(self, switch: str, port: str,
                 t: float | None = None) -> tuple[str, str] | None:
        """What LLDP on `switch:port` sees at `t`: (device, its port) at the far end of the
        real cable."""
        target = f"{switch}:{port}"
        cabling = self._cabling_for(t)
        if target in cabling.extra:
            return split_key(cabling.extra[target])
        landed = cabling.landed.get(target)
        if landed is not None:
            host, nic = landed
            found = self.graph.find_nic(host, nic)
            return host, (found.netdev or nic) if found else nic
        if target in cabling.vacated:
            return None
        far = self.graph.far_end(target)
        if far is None:
            return None
        device, far_port = split_key(far)
        return (device, far_port) if device in self.graph.switches else None

    def real_link(self, switch: str, port: str, t: float | None = None) -> int | None:
        """The topology link of whatever is really cabled at `switch:port` at `t` (None: no
        cable, or one the topology does not have)."""
        endpoint = f"{switch}:{port}"
        cabling = self._cabling_for(t)
        landed = cabling.landed.get(endpoint)
        if landed is not None:
            attachment = self.graph.attachments.get(landed)
            return attachment.link_index if attachment else None
        if endpoint in cabling.vacated or endpoint in cabling.extra:
            return None
        return self.graph.port_links.get(endpoint)


class Cabling(NamedTuple):
    """The plant as it really is at one moment (see `SimBase._cabling_for`)."""

    actual: dict[tuple[str, str], str | None]
    """(host, NIC) -> the `switch:port` its cable lands on; None: no cable."""
    landed: dict[str, tuple[str, str]]
    """`switch:port` -> the (host, NIC) whose cable lands there."""
    vacated: frozenset[str]
    """Switch ports the topology cables to a NIC whose cable is not there."""
    extra: dict[str, str]
    """Both ends of each cable the topology does not have: `switch:port` -> the other end."""
    moved: tuple[tuple[str, str, str, str], ...]
    """(host, NIC, designed switch, real switch or '') of each NIC cabled elsewhere."""


CABLING_FAULTS = frozenset({FaultKind.RANK_MAPPING, FaultKind.MISCABLED,
                            FaultKind.CABLE_MISSING, FaultKind.CABLE_EXTRA})
"""The faults that change the plant (what is cabled where), not a link's health."""


def _natural(name: str) -> list[int | str]:
    """`Ethernet8` before `Ethernet16`."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
