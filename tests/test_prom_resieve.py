"""What a refresh sieves and keeps (`fabtui.prom.resieve`): only the devices scraped since their
last sieve are asked about again; every other device's last answer stands."""

from __future__ import annotations

from fabtui.paths import demo_topology
from fabtui.prom.catalog import MAPPED, Element
from fabtui.prom.client import Sample
from fabtui.prom.labels import LabelMap, Resolver
from fabtui.prom.presence import device_clocks
from fabtui.prom.resieve import SLICES, WHOLE_EVERY, SieveMemory, device_times
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology

GRAPH = FabricGraph(load_topology(demo_topology()).topology)
RESOLVER = Resolver(GRAPH, LabelMap())
PFC = next(m for m in MAPPED if m.key == "sonic.pfc_rx")


def port(switch: str, name: str, value: float = 1.0) -> Sample:
    return Sample({"instance": switch, "device": name}, value, 0.0)


def clocks(**times: float) -> dict[Element, dict[str, float]]:
    return {"port": {switch.replace("_", "-"): at for switch, at in times.items()}}


def test_the_first_refresh_sieves_whole_then_only_the_devices_that_moved() -> None:
    memory = SieveMemory()
    assert memory.plan({"port"}, clocks(leaf_g00_r0=10, leaf_g00_r1=10, leaf_g00_r2=10)) == \
        {"port": None}
    memory.record("port", None, {PFC.key: [port("leaf-g00-r0", "Ethernet0"),
                                           port("leaf-g00-r1", "Ethernet8")]},
                  MAPPED, RESOLVER, {"leaf-g00-r0": 10, "leaf-g00-r1": 10, "leaf-g00-r2": 10})
    # nothing scraped since: nothing asked, both answers kept
    assert memory.plan({"port"}, clocks(leaf_g00_r0=10, leaf_g00_r1=10, leaf_g00_r2=10)) == \
        {"port": set()}
    assert len(memory.by_key()[PFC.key]) == 2
    # one switch scraped since: only it is asked about; its new answer replaces its old one
    plan = memory.plan({"port"}, clocks(leaf_g00_r0=11, leaf_g00_r1=10, leaf_g00_r2=10))
    assert plan == {"port": {"leaf-g00-r0"}}
    memory.record("port", {"leaf-g00-r0"},
                  {PFC.key: [port("leaf-g00-r0", "Ethernet4"), port("leaf-g00-r1", "Ethernet9")]},
                  MAPPED, RESOLVER, {"leaf-g00-r0": 11})
    kept = sorted(RESOLVER.element("port", s.labels) or "" for s in memory.by_key()[PFC.key])
    # a sample of a device not asked about (a regex's cross product) is not taken
    assert kept == ["leaf-g00-r0:Ethernet4", "leaf-g00-r1:Ethernet8"]
    assert memory.plan({"port"}, clocks(leaf_g00_r0=11, leaf_g00_r1=10, leaf_g00_r2=10)) == \
        {"port": set()}


def test_most_devices_moved_are_sieved_a_slice_a_refresh_and_a_due_turn_whole() -> None:
    """One target serving a whole family moves all its devices at once: they are asked about
    a slice a refresh (none asked twice, all within SLICES refreshes), never all at once;
    every WHOLE_EVERY refreshes the kind is sieved whole, its old answers dropped."""
    switches = sorted(GRAPH.switches)
    memory = SieveMemory()
    first: dict[Element, dict[str, float]] = {"port": dict.fromkeys(switches, 10.0)}
    memory.plan({"port"}, first)
    memory.record("port", None, {PFC.key: [port("leaf-g00-r1", "Ethernet8")]}, MAPPED,
                  RESOLVER, first["port"])
    moved: dict[Element, dict[str, float]] = {"port": dict.fromkeys(switches, 11.0)}
    asked: list[str] = []
    for _ in range(SLICES):
        plan = memory.plan({"port"}, moved)["port"]
        assert plan is not None and len(plan) < len(switches)
        asked += plan
        memory.record("port", plan, {}, MAPPED, RESOLVER,
                      {d: moved["port"][d] for d in plan})
    assert sorted(asked) == switches
    assert memory.by_key() == {}  # the moved switch's new answer (nothing near a limit)
    plans = [memory.plan({"port"}, moved)["port"] for _ in range(WHOLE_EVERY)]
    assert plans.count(None) == 1 and all(p == set() for p in plans if p is not None)


def test_a_kind_without_clocks_is_sieved_whole_every_refresh() -> None:
    memory = SieveMemory()
    for _ in range(3):
        assert memory.plan({"port"}, {}) == {"port": None}
        memory.record("port", None, {}, MAPPED, RESOLVER, {})


def test_device_times_are_each_devices_newest_sample() -> None:
    answers = [[Sample({"instance": "leaf-g00-r0"}, 5.0, 0.0),
                Sample({"instance": "leaf-g00-r0"}, 7.0, 0.0),
                Sample({"instance": "nosuchswitch"}, 9.0, 0.0)]]
    assert device_times(["port"], answers, RESOLVER) == {"port": {"leaf-g00-r0": 7.0}}


def test_the_kinds_sieved_whole_are_known_before_the_clocks() -> None:
    """What `plan` will sieve whole whatever the clocks say (never sieved, or the kind's turn)
    is known ahead, so the source asks those sieves with the clocks: every kind on the first
    refresh, none after, each kind again at its turn."""
    memory = SieveMemory()
    kinds: set[Element] = {"port", "nic"}
    times: dict[Element, dict[str, float]] = {"port": {"leaf-g00-r0": 10.0},
                                              "nic": {"node001": 10.0}}
    for round_no in range(1, 2 * WHOLE_EVERY + 2):
        ahead = memory.whole_ahead(kinds)
        plan = memory.plan(kinds, times)
        assert ahead == {kind for kind, devices in plan.items() if devices is None}, round_no
        for kind in kinds:
            memory.record(kind, plan[kind], {}, MAPPED, RESOLVER, times[kind])
        if round_no == 1:
            assert ahead == kinds
    assert memory.whole_ahead(kinds) == set()


def test_a_spread_first_sieve_asks_each_device_once_within_its_budget() -> None:
    """With a budget, the first sieve is spread: each refresh asks about the next devices
    never sieved (all of a node's kinds together) until the budget's elements are spent, no
    kind whole and no device twice, the others left `unsieved`; once every device was sieved,
    nothing is asked until a clock moves, and only then may a kind be sieved whole again."""
    nodes, switches = sorted(GRAPH.nodes), sorted(GRAPH.switches)
    times: dict[Element, dict[str, float]] = {
        "gpu": dict.fromkeys(nodes, 10.0), "nic": dict.fromkeys(nodes, 10.0),
        "port": dict.fromkeys(switches, 10.0)}
    node_kinds: tuple[Element, ...] = ("gpu", "nic")
    sizes: dict[tuple[str, Element], int] = {
        **{(n, kind): 8 for n in nodes for kind in node_kinds},
        **{(s, "port"): 40 for s in switches}}
    everything = sum(sizes.values())
    budget = everything // 4
    memory = SieveMemory(budget=budget)
    kinds = set(times)
    asked: dict[Element, list[str]] = {kind: [] for kind in kinds}
    refreshes = 0
    while refreshes == 0 or memory.unsieved_kinds:
        assert memory.whole_ahead(kinds) == set()
        plan = memory.plan(kinds, times, sizes)
        refreshes += 1
        assert all(devices is not None for devices in plan.values())
        spent = sum(sizes[(d, kind)] for kind, devices in plan.items() for d in devices or ())
        assert spent < budget + 2 * 8 + 40  # the last device may cross it
        assert plan["gpu"] == plan["nic"]  # a node's kinds together
        for kind, devices in plan.items():
            assert devices is not None
            assert not set(asked[kind]) & devices
            asked[kind] += devices
            memory.record(kind, devices, {}, MAPPED, RESOLVER, times[kind])
        left = {kind: memory.unsieved(kind, times[kind]) for kind in kinds}
        assert {kind for kind, devices in left.items() if devices} == memory.unsieved_kinds
    assert 4 <= refreshes <= 6
    assert {kind: sorted(devices) for kind, devices in asked.items()} == \
        {kind: sorted(devices) for kind, devices in times.items()}
    assert memory.plan(kinds, times, sizes) == {kind: set() for kind in kinds}
    # each kind's turn is spread too (`test_a_kinds_turn_is_spread_within_the_budget`)
    plans = [memory.plan(kinds, times, sizes) for _ in range(WHOLE_EVERY)]
    assert not any(devices is None for plan in plans for devices in plan.values())


def test_a_kinds_turn_is_spread_within_the_budget() -> None:
    """With a budget, a kind's periodic sieve (its turn, every WHOLE_EVERY refreshes) is never
    whole: its devices are sieved again over the next refreshes, each once, within what the
    budget leaves after the devices that moved (one device at least), all of it within
    ceil(elements / budget) + 1 refreshes; a device that moved meanwhile is sieved for that and
    leaves the wait; the turns of two kinds never overlap; the turn asks the series outside
    the dated devices (`turned`), whose answers replace the last turn's, and forgets the devices
    no longer dated."""
    nodes, switches = sorted(GRAPH.nodes), sorted(GRAPH.switches)
    times: dict[Element, dict[str, float]] = {
        "nic": dict.fromkeys(nodes, 10.0), "port": dict.fromkeys(switches, 10.0)}
    sizes: dict[tuple[str, Element], int] = {
        **{(n, "nic"): 8 for n in nodes}, **{(s, "port"): 40 for s in switches}}
    kinds = set(times)
    budget = 30
    memory = SieveMemory(budget=budget)
    for _ in range(40):  # the first sieve, spread
        plan = memory.plan(kinds, times, sizes)
        for kind, devices in plan.items():
            memory.record(kind, devices, {}, MAPPED, RESOLVER, times[kind])
        if not memory.unsieved_kinds:
            break
    assert not memory.unsieved_kinds
    gone = ("leaf-g00-r1", "Ethernet8")
    memory.answers["port"][gone[0]] = {PFC.key: [port(*gone)]}
    swept: dict[Element, list[str]] = {kind: [] for kind in kinds}
    turns: dict[Element, int] = {}
    spans: dict[Element, int] = {}
    moved_once, mover = False, ""
    for round_no in range(2 * WHOLE_EVERY):
        if set(spans) == kinds:
            break
        plan = memory.plan(kinds, times, sizes)
        assert all(devices is not None for devices in plan.values()), round_no
        for kind in memory.turned:
            assert kind not in turns and not set(memory.resweep) - {kind}  # never overlapping
            turns[kind] = round_no
        spent = sum(sizes[(d, kind)] for kind, devices in plan.items() for d in devices or ())
        assert spent < budget + 40, round_no
        for kind, devices in plan.items():
            assert devices is not None
            if kind in turns and kind not in spans:
                assert not set(swept[kind]) & devices
                swept[kind] += devices
                if kind not in memory.resweep:
                    spans[kind] = round_no - turns[kind] + 1
            memory.record(kind, devices, {}, MAPPED, RESOLVER, times[kind])
        if memory.turned == {"port"}:  # the switch is gone; its answer goes with the turn
            times["port"].pop(gone[0])
            memory.record_outside("port", {PFC.key: [port("leaf-x", "Ethernet1")]},
                                  times["port"])
            assert gone[0] not in memory.answers["port"]
            assert memory.by_key()[PFC.key] == [port("leaf-x", "Ethernet1")]
        if mover:  # sieved for its scrape, out of the wait
            assert mover in (plan["nic"] or set())
            assert mover not in memory.resweep.get("nic", set())
            mover = ""
        if "nic" in memory.resweep and not moved_once:  # one node scraped meanwhile
            moved_once = True
            mover = sorted(memory.resweep["nic"])[-1]
            times["nic"][mover] = 11.0
    assert set(turns) == kinds and moved_once
    for kind, sieved in swept.items():
        assert sorted(sieved) == sorted(times[kind]), kind
        elements = sum(sizes[(d, kind)] for d in times[kind])
        assert spans[kind] <= -(-elements // budget) + 1, kind


def test_a_device_that_comes_later_is_unsieved_until_its_refresh() -> None:
    memory = SieveMemory(budget=1)
    first: dict[Element, dict[str, float]] = {"port": {"leaf-g00-r0": 10.0}}
    plan = memory.plan({"port"}, first, {})
    assert plan == {"port": {"leaf-g00-r0"}} and not memory.unsieved_kinds
    memory.record("port", plan["port"], {}, MAPPED, RESOLVER, first["port"])
    later: dict[Element, dict[str, float]] = {"port": {"leaf-g00-r0": 10.0,
                                                       "leaf-g00-r1": 12.0}}
    assert memory.unsieved("port", later["port"]) == {"leaf-g00-r1"}
    assert memory.plan({"port"}, later, {}) == {"port": {"leaf-g00-r1"}}


def test_device_clocks_are_the_newest_of_each_devices_elements() -> None:
    """The first refresh dates the devices from the whole presence (`device_clocks`): per
    device (its device labels only, as `max by` answers), the newest of its elements' times,
    a series without the element's own label counted too; the GPUs by node and host."""
    present = [port("leaf-g00-r0", "Ethernet0", 100.0), port("leaf-g00-r0", "Ethernet4", 130.0),
               Sample({"instance": "leaf-g00-r0"}, 120.0, 0.0),
               port("spine-0", "Ethernet0", 90.0), Sample({"device": "Ethernet8"}, 80.0, 0.0)]
    found = device_clocks("port", present, LabelMap())
    assert sorted((sorted(s.labels.items()), s.value) for s in found) == [
        ([], 80.0), ([("instance", "leaf-g00-r0")], 130.0), ([("instance", "spine-0")], 90.0)]
    labels = LabelMap()
    gpus = [Sample({labels.gpu_node: "node001", labels.node: "10.0.0.1:9400", labels.gpu: g},
                   float(t), 0.0) for g, t in (("0", 5), ("1", 7))]
    assert [(s.labels, s.value) for s in device_clocks("gpu", gpus, labels)] == [
        ({labels.gpu_node: "node001", labels.node: "10.0.0.1:9400"}, 7.0)]


def test_with_a_budget_devices_scraped_since_are_sieved_first_and_within_it() -> None:
    """With a budget, a family scraped at once (every switch moved) is sieved by the budget,
    refresh after refresh (never all in one), each switch once, before the budget goes to
    devices never sieved (one of those a refresh still: each need progresses) or waiting for
    their kind's turn; one device at least a refresh however large; a switch left waiting
    keeps its last answer and its clock then (the source dates its quiet marks by it)."""
    switches = sorted(GRAPH.switches)
    sizes: dict[tuple[str, Element], int] = {(s, "port"): 40 for s in switches}
    sizes[("leaf-new", "port")] = 40
    memory = SieveMemory(budget=100)
    first: dict[Element, dict[str, float]] = {"port": dict.fromkeys(switches, 10.0)}
    while True:
        plan = memory.plan({"port"}, first, sizes)
        memory.record("port", plan["port"], {PFC.key: [port("leaf-g00-r1", "Ethernet8")]},
                      MAPPED, RESOLVER, first["port"])
        if not memory.unsieved_kinds:
            break
    later: dict[Element, dict[str, float]] = {"port": dict.fromkeys(switches, 11.0)}
    later["port"]["leaf-new"] = 11.0  # never sieved: one a refresh beside the moved ones
    asked: list[str] = []
    refreshes = 0
    while len(asked) < len(switches) + 1:
        plan = memory.plan({"port"}, later, sizes)
        refreshes += 1
        devices = plan["port"]
        assert devices is not None
        assert ("leaf-new" in devices) is (refreshes == 1)
        assert sum(sizes[(d, "port")] for d in devices) <= 100 + 40 + 40
        assert not set(asked) & devices
        asked += devices
        memory.record("port", devices, {}, MAPPED, RESOLVER,
                      {d: later["port"][d] for d in devices})
        waiting = [s for s in switches if s not in asked]
        assert all(memory.clocks["port"][s] == 10.0 for s in waiting)
        if "leaf-g00-r1" in waiting:
            assert memory.by_key()[PFC.key] == [port("leaf-g00-r1", "Ethernet8")]
    assert 2 <= refreshes <= -(-len(switches) * 40 // 100) + 1
    assert memory.plan({"port"}, later, sizes)["port"] == set()
    big = SieveMemory(budget=10)
    big.plan({"port"}, first, sizes)
    assert len(big.plan({"port"}, first, sizes)["port"] or ()) == 1  # 40 > 10: one a refresh


def test_while_devices_never_sieved_wait_those_scraped_since_take_half_the_budget() -> None:
    """A slow Prometheus's paced budget (`fabtui.prom.pace`) could go all to the devices
    scraped since their last sieve (every device of a family moves each scrape), judging no
    new device but one a refresh: while devices never sieved wait, the moved ones take half
    the budget at most (one device at least) and the never sieved the rest; with none
    waiting, the moved ones take it all again."""
    old = [f"node{i:03d}" for i in range(20)]
    new = [f"node{i:03d}" for i in range(20, 40)]
    sizes: dict[tuple[str, Element], int] = {(d, "nic"): 10 for d in old + new}
    memory = SieveMemory(budget=100)
    memory.clocks["nic"] = dict.fromkeys(old, 10.0)
    moved: dict[Element, dict[str, float]] = {"nic": {**dict.fromkeys(old, 11.0),
                                                      **dict.fromkeys(new, 11.0)}}
    chosen = memory.plan({"nic"}, moved, sizes)["nic"] or set()
    assert len(chosen & set(old)) == 5 and len(chosen & set(new)) == 5
    assert memory.spent == 100
    memory.clocks["nic"].update(dict.fromkeys(new, 11.0))  # every device sieved once
    chosen = memory.plan({"nic"}, moved, sizes)["nic"] or set()
    assert len(chosen) == 10 and chosen <= set(old)


def test_a_discovery_read_is_sliced_by_the_values_seen_and_the_slices_cover_every_value() -> None:
    """A kind's discovery read takes one slice of its clock series a turn (issue 42.3): the
    slices of the element label's values seen are about equal (netdevs all ending in `np0`
    still spread), and with the last slice (the values never seen) every value, seen or not,
    is matched by exactly one slice in `DISCOVER_SLICES` turns."""
    import re

    from fabtui.prom.queries import DISCOVER_SLICES, discovery_slice

    seen = [f"enp{bus}s0f0np0" for bus in (12, 13, 75, 76, 134, 135, 203, 204)]
    others = ["enp9s0f1np1", "mlx5_9", ""]
    matched: dict[str, int] = {}
    sizes = []
    for turn in range(DISCOVER_SLICES):
        term = discovery_slice("device", seen, turn)
        assert term is not None
        how, pattern = re.fullmatch(r'device(=~|!~)"(.*)"', term).groups()  # type: ignore[union-attr]
        regex = re.compile(pattern.replace("\\\\", "\\"))
        hits = [v for v in seen + others if bool(regex.fullmatch(v)) is (how == "=~")]
        sizes.append(len([v for v in hits if v in seen]))
        for value in hits:
            matched[value] = matched.get(value, 0) + 1
    assert matched == dict.fromkeys(seen + others, 1)
    assert max(sizes) <= 2 and sizes[-1] == 0  # a fifth of those seen a turn at most
    assert discovery_slice("device", seen, DISCOVER_SLICES) == discovery_slice("device", seen, 0)
    assert discovery_slice("device", ["mlx5_0"], 3) is None  # fewer values than slices
