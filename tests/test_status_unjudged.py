"""Elements a source has series of but has not judged yet (Prometheus's first sieve spread over
the first refreshes, issue 42): never ok, nor anything rolled up over them, counted and said so,
until a verdict comes or the source says none is left."""

from __future__ import annotations

from fabtui.model.verdict import Verdict
from fabtui.tui.messages import SnapshotArrived
from fabtui.tui.screens.fabric import FabricScreen
from fabtui.tui.widgets.detail import DetailPanel
from fabtui.tui.widgets.header import layer_parts
from fabtui.views.fabricmap import FabricMap, Layer
from fabtui.views.status import FabricStatus, Health, PollState
from fabtui.views.updates import NotJudged, Quiet, Results
from tests.support.tui_support import (
    NOW,
    asynctest,
    healthy_round,
    make_app,
    result,
    screen_text,
    workspace,
)

NODE = "node001"
NIC = "node001:mlx5_0"
PORT = "leaf-g00-r0:Ethernet0"
"""The leaf port `NIC` is cabled to (the demo's `link:0`)."""
WHY = "not sieved yet: 1 of 18 devices judged"


def status() -> tuple[FabricStatus, FabricMap]:
    fabric = FabricMap.build(workspace().graph())
    return FabricStatus(fabric, clock=lambda: NOW), fabric


def test_an_unjudged_device_is_never_ok_nor_any_roll_up_over_it() -> None:
    live, fabric = status()
    link = next(k for k, members in fabric.members.items() if NIC in members and PORT in members)
    nics = tuple(k for k in fabric.members[NODE] if ":mlx5_" in k)
    gpus = tuple(k for k in fabric.members[NODE] if ":gpu" in k)
    # the switch was sieved (its port quiet: ok); the node not yet
    live.take(Quiet("leaf-g00-r0", (PORT,), ("switch.pfc",), NOW, 60))
    live.take(NotJudged(frozenset((*nics, *gpus)), WHY))
    snapshot = live.snapshot(1, PollState.WAITING)
    assert snapshot.of(PORT) is Health.OK
    assert {snapshot.of(k) for k in (*nics, *gpus)} == {Health.UNJUDGED}
    assert snapshot.of(NODE) is Health.UNJUDGED
    assert snapshot.of(link) is Health.UNJUDGED  # half judged is not ok
    assert snapshot.unjudged_why == WHY
    count = snapshot.counts[Layer.NICS]
    assert count.unjudged == len(nics) and count.ok == 0 and count.problems == 0
    _, health, shown, total = next(p for p in layer_parts(snapshot.counts)
                                   if p[0] == Layer.NICS.value)
    assert health is Health.UNJUDGED and shown == total - count.ok
    # a verdict wins over "not judged yet", whichever it is
    live.take(Results(result("nic.ethtool", NIC,
                             [(NIC, "rate.rx_prio3_pause", 9e3, Verdict.FAIL)]), 60))
    snapshot = live.snapshot(2, PollState.WAITING)
    assert snapshot.of(NIC) is Health.FAIL and snapshot.of(NODE) is Health.FAIL
    assert snapshot.of(nics[1]) is Health.UNJUDGED
    # every device judged: the source says none is left; what has no verdict is unknown
    live.take(NotJudged(frozenset()))
    snapshot = live.snapshot(3, PollState.WAITING)
    assert snapshot.of(nics[1]) is Health.UNKNOWN and snapshot.of(link) is Health.FAIL
    assert snapshot.counts[Layer.NICS].unjudged == 0 and snapshot.unjudged_why == ""


def test_a_judged_element_keeps_its_verdict_while_listed_unjudged() -> None:
    """An element with a fresh verdict (an earlier source's) is shown by it, not as waiting."""
    live, _ = status()
    live.take(Quiet(NODE, (NIC,), ("nic.ethtool",), NOW, 60))
    live.take(NotJudged(frozenset((NIC,)), WHY))
    assert live.snapshot(1, PollState.WAITING).of(NIC) is Health.OK


@asynctest
async def test_the_fabric_screen_says_what_is_not_judged_yet() -> None:
    """On the Fabric screen: the NIC layer counts its not-judged NICs with their own sign, a
    not-judged NIC's row shows that sign, never ✓, and its detail says why."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        healthy_round(app)
        nics = frozenset(k for k in app.fabric.members[NODE] if ":mlx5_" in k)
        for nic in nics:  # every other NIC ok; node001's without a verdict yet
            app.status._states.pop(nic, None)
        app.status.take(NotJudged(nics, WHY))
        app.screen.post_message(SnapshotArrived(app.status.snapshot(1, PollState.WAITING)))
        await pilot.press("slash", *NIC, "enter")
        await pilot.pause()
        text = screen_text(app)
        assert "NICs …8/64" in text
        row = next(line for line in text.splitlines() if line.startswith(NODE))
        assert "✓" not in row and "…" in row
        screen = app.screen
        assert isinstance(screen, FabricScreen)
        detail = screen.query_one(DetailPanel)
        assert f"not judged yet: {WHY}" in str(detail.render_text(NIC, screen.snapshot))
