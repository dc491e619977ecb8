"""`mlxlink -d DEV --pc` clears a simulated NIC's counters, as it clears a real one's (#38).

A repair is judged on the NIC's BER after it, and `mlxlink -c` counts since the counters' last
clear (mstflint mlxlink: `--pc` "Clear Counters" sends PPCNT with `clr=1`; `Time Since Last
Clear [Min]` restarts). The demo fabric must do the same on both node transports (the sim
server's client and this process), or a repair's after-reading on it would still count the old
optic's errors.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from fabtui.model.parsed.mlxlink import MlxlinkPort
from fabtui.parsers import registry
from fabtui.parsers.mlxlink import fec_histogram
from fabtui.sim.core import Sim
from fabtui.sim.inprocess import InProcessSimSshTransport
from fabtui.sim.node_commands import run
from fabtui.sim.state import TIME_VAR, CounterClear, build_sim, read_state
from fabtui.sim.transports import SimSshTransport
from fabtui.transports.ssh import SshTarget, SshTransport
from tests.support.sim import pinned_state

NODE = SshTarget(name="node003", host="node003")
CLEAR_AT = 600.0
SOAK = 300.0


def _run(transport: SshTransport, argv: list[str]) -> tuple[str, int | None]:
    result = asyncio.run(transport.run(NODE, argv, timeout=30))
    return result.output, result.exit_status


def _mlxlink(text: str) -> MlxlinkPort:
    parsed = registry.parse(text, "mlxlink")
    assert isinstance(parsed, MlxlinkPort)
    return parsed


def _counters(text: str) -> dict[str, Any]:
    counters = _mlxlink(text).model_dump(mode="json")["counters"]
    assert counters is not None, text
    return {k: v for k, v in counters.items() if v is not None}


@pytest.mark.parametrize("transport", [SimSshTransport, InProcessSimSshTransport])
def test_a_clear_is_recorded_and_the_next_reading_counts_from_it(
        transport: type[SimSshTransport] | type[InProcessSimSshTransport], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # optic-degrading 10 minutes in (up, its BER rising): node003's NIC has counted since t=0.
    state = pinned_state(tmp_path, monkeypatch, "optic-degrading")
    monkeypatch.setenv(TIME_VAR, str(CLEAR_AT))
    ssh = transport(state)
    before, status = _run(ssh, ["mlxlink", "-d", "mlx5_3", "-c"])
    assert status == 0
    assert "Time Since Last Clear [Min]        : 10.0" in before

    out, status = _run(ssh, ["sh", "-c", "mlxlink -d mlx5_3 --pc"])
    assert status == 0 and out.rstrip().endswith("Clearing Counters..."), out
    assert _mlxlink(out).state == "Active"  # the Operational Info first
    saved = read_state(state)
    assert saved is not None
    assert [(c.endpoint, c.at) for c in saved.cleared] == [("node003:mlx5_3", CLEAR_AT)]

    monkeypatch.setenv(TIME_VAR, str(CLEAR_AT + SOAK))
    after, status = _run(ssh, ["mlxlink", "-d", "mlx5_3", "-c"])
    assert status == 0
    assert "Time Since Last Clear [Min]        : 5.0" in after
    sim = build_sim(saved)
    link = sim.graph.attachments[("node003", "mlx5_3")].link_index
    lost = sim.receiver(link, "node003", "mlx5_3", CLEAR_AT + SOAK)[1] - \
        sim.receiver(link, "node003", "mlx5_3", CLEAR_AT)[1]
    corrected = sim.receiver(link, "node003", "mlx5_3", CLEAR_AT + SOAK)[0] - \
        sim.receiver(link, "node003", "mlx5_3", CLEAR_AT)[0]
    bits = sim.bits_received(link, CLEAR_AT + SOAK) - sim.bits_received(link, CLEAR_AT)
    read = _counters(after)
    assert read["effective_physical_errors"] == lost
    # The raw BER is the soak's: what was corrected since the clear over the bits since.
    assert read["raw_physical_ber"] == pytest.approx(corrected / bits, rel=0.5)
    assert sum(read["raw_physical_errors_per_lane"]) == pytest.approx(corrected, abs=8)
    # The other NICs are not cleared.
    other, _ = _run(ssh, ["mlxlink", "-d", "mlx5_0", "-c"])
    assert "Time Since Last Clear [Min]        : 15.0" in other


def _plain_and_cleared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Sim, Sim]:
    """optic-degrading's demo fabric as it is, and the same with node003:mlx5_3's counters
    cleared at `CLEAR_AT`."""
    state = pinned_state(tmp_path, monkeypatch, "optic-degrading")
    loaded = read_state(state)
    assert loaded is not None
    return build_sim(loaded), build_sim(loaded.model_copy(update={"cleared": [
        CounterClear(endpoint="node003:mlx5_3", at=CLEAR_AT)]}))


def test_a_reading_before_the_clear_is_not_changed_by_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, cleared = _plain_and_cleared(tmp_path, monkeypatch)
    argv = ["mlxlink", "-d", "mlx5_3", "-c"]
    assert run(cleared, "node003", argv, CLEAR_AT - 1) == run(plain, "node003", argv,
                                                              CLEAR_AT - 1)
    assert run(cleared, "node003", argv, CLEAR_AT + 1) != run(plain, "node003", argv,
                                                              CLEAR_AT + 1)


def test_only_a_clear_of_a_known_nic_is_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = pinned_state(tmp_path, monkeypatch, "healthy")
    ssh = InProcessSimSshTransport(state)
    out, status = _run(ssh, ["mlxlink", "-d", "mlx5_99", "--pc"])
    assert status != 0
    out, status = _run(ssh, ["mlxlink", "-d", "mlx5_3", "-m", "-c"])
    assert status == 0 and "Clearing Counters" not in out
    saved = read_state(state)
    assert saved is not None and saved.cleared == []


def test_the_fec_histogram_counts_from_the_clear_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--pc` clears every PPCNT group, the FEC histogram's (0x23) among them."""
    plain, cleared = _plain_and_cleared(tmp_path, monkeypatch)
    argv = ["mlxlink", "-d", "mlx5_3", "--rx_fec_histogram", "--show_histogram"]

    def bins(sim: Sim, t: float) -> dict[int, int]:
        return fec_histogram(_mlxlink(run(sim, "node003", argv, t)[0])) or {}

    since = {k: bins(plain, CLEAR_AT + SOAK)[k] - bins(plain, CLEAR_AT)[k]
             for k in bins(plain, CLEAR_AT)}
    assert bins(cleared, CLEAR_AT + SOAK) == since
    assert sum(since.values()) < sum(bins(plain, CLEAR_AT + SOAK).values())


def test_one_mlxlink_reading_integrates_the_receiver_once_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`mlxlink -c` with the FEC histogram after a clear: the receiver's counters (integrals
    over the scenario's time) are worked out once now and once at the clear, shared by the
    counters, the lanes and the histogram (issue 42), and still read as before."""
    _, cleared = _plain_and_cleared(tmp_path, monkeypatch)
    real = cleared.receiver_counts
    asked: list[float] = []

    def counted(link: int, device: str, port: str,
                t: float) -> tuple[int, int, int, tuple[int, ...]]:
        asked.append(t)
        return real(link, device, port, t)

    monkeypatch.setattr(cleared, "receiver_counts", counted)
    argv = ["mlxlink", "-d", "mlx5_3", "-c", "--rx_fec_histogram", "--show_histogram"]
    out, _err, status = run(cleared, "node003", argv, CLEAR_AT + SOAK)
    assert status == 0
    assert sorted(asked) == [CLEAR_AT, CLEAR_AT + SOAK]
    monkeypatch.undo()
    link = cleared.graph.attachments[("node003", "mlx5_3")].link_index
    now = cleared.receiver_counts(link, "node003", "mlx5_3", CLEAR_AT + SOAK)
    then = cleared.receiver_counts(link, "node003", "mlx5_3", CLEAR_AT)
    read = _counters(out)
    assert read["effective_physical_errors"] == now[1] - then[1]
    assert sum(read["raw_physical_errors_per_lane"]) == pytest.approx(now[0] - then[0], abs=8)
    assert fec_histogram(_mlxlink(out)) == {k: n - o for k, (n, o) in
                                             enumerate(zip(now[3], then[3], strict=True))}
