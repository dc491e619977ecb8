"""The probe catalog, parameter rendering, counter arithmetic, and probes run end to end."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.errors import InputError
from fabtui.model.probe import ProbeDef, ProbeResult, TargetKind, Verdict
from fabtui.paths import shipped_dir
from fabtui.probes.catalog import load_catalog
from fabtui.probes.counters import changes, delta, ratio
from fabtui.probes.render import RenderError, fill_params, render_argv, render_cli
from fabtui.probes.runner import ProbeRunner, Transports
from fabtui.probes.targets import TargetError, resolve
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology
from fabtui.transports.local import LocalTransport
from fabtui.transports.ssh import SshTransport
from tests.support.sshd_server import SshServer, require_sshd

HOSTILE = "x; rm -rf / $(touch /tmp/fabtui-pwned) `id` 'q\"\n"


@pytest.fixture(scope="module")
def graph() -> FabricGraph:
    return FabricGraph(load_topology(shipped_dir("topology") / "demo.yaml").topology)


def test_the_shipped_catalog_loads_and_covers_the_issue() -> None:
    catalog = load_catalog([shipped_dir("probes")])
    names = set(catalog)
    for expected in ("nccl.all_reduce", "nccl.all_gather", "nccl.reduce_scatter", "nccl.alltoall",
                     "nccl.sendrecv", "nccl.mpirun", "nccl.srun", "perftest.ib_write_bw",
                     "perftest.ib_read_bw", "perftest.ib_send_bw", "perftest.ib_write_lat",
                     "perftest.ib_send_lat", "nic.ethtool", "nic.rdma_statistic", "nic.ibstat",
                     "nic.ibv_devinfo", "nic.show_gids", "nic.mlxlink", "switch.counters",
                     "switch.pfc", "switch.queues", "switch.fec", "switch.dom", "gpu.topo",
                     "gpu.smi_q", "gpu.dcgmi_diag", "gpu.nvml", "logs.nccl", "logs.dmesg"):
        assert expected in names, expected
    for probe in catalog.values():
        assert all(t.source for t in probe.thresholds), probe.name
        assert probe.source_file and ".toml:" in probe.source_file
    flavors = set(catalog["switch.counters"].command.cli or {})
    assert flavors == {"sonic", "nvue", "eos", "nxos", "onyx"}


def test_catalog_errors_name_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        '[[probe]]\nname = "x.y"\ndescription = "d"\ntarget = "node"\ntransport = "ssh"\n'
        'parser = "nope"\ncommand.argv = ["true"]\n\n[[probe]]\nname = "BAD NAME"\n'
        'description = "d"\ntarget = "moon"\ntransport = "ssh"\n')
    with pytest.raises(InputError) as caught:
        load_catalog([tmp_path])
    messages = [str(p) for p in caught.value.problems]
    assert any(m.startswith(f"{tmp_path / 'bad.toml'}:6: probe x.y: unknown parser 'nope'")
               for m in messages)
    assert any(":10: probe #2: name:" in m for m in messages)
    assert any(":12: probe #2: target:" in m for m in messages)


def test_a_user_probe_overrides_a_shipped_one(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text(
        '[[probe]]\nname = "gpu.topo"\ndescription = "ours"\ntarget = "node"\n'
        'transport = "ssh"\nparser = "ethtool-stats"\ncommand.argv = ["true"]\n')
    catalog = load_catalog([tmp_path, shipped_dir("probes")])
    assert catalog["gpu.topo"].description == "ours"


def _probe(**changes: object) -> ProbeDef:
    data: dict[str, object] = {"name": "t.echo", "description": "test", "target": "node",
                               "transport": "ssh", "parser": "ethtool-stats",
                               "command": {"argv": ["printf", "%s", "{value}"]},
                               "params": {"value": {"required": True}}}
    data.update(changes)
    return ProbeDef.model_validate(data)


def test_hostile_values_stay_one_argv_element(graph: FabricGraph) -> None:
    target = resolve(graph, "node001", "node")
    values = fill_params(_probe(), target, {"value": HOSTILE})
    assert render_argv(["printf", "%s", "{value}"], values) == ["printf", "%s", HOSTILE]


def test_hostile_values_never_reach_a_switch_cli() -> None:
    with pytest.raises(RenderError, match="not safe in a switch CLI command"):
        render_cli("show interfaces counters {port}", {"port": "Ethernet0; reload"})
    assert render_cli("show interfaces {port} transceiver", {"port": "Ethernet1/1"}) == \
        "show interfaces Ethernet1/1 transceiver"


def test_a_hostile_value_through_the_local_transport_is_printed_not_run(tmp_path: Path) -> None:
    probe = _probe(command={"argv": ["printf", "%s", "{value}"]}, target="local",
                   transport="local")
    result = asyncio.run(LocalTransport().run(render_argv(
        probe.command.argv or [], {"value": HOSTILE})))
    assert result.output == HOSTILE
    assert not Path("/tmp/fabtui-pwned").exists()


def test_params_come_from_the_target_then_defaults(graph: FabricGraph) -> None:
    catalog = load_catalog([shipped_dir("probes")])
    values = fill_params(catalog["nic.ethtool"], resolve(graph, "node002:mlx5_3", "nic"), {})
    assert values == {"netdev": "enp92s0f0np0"}
    with pytest.raises(RenderError, match="has no parameter 'nope'"):
        fill_params(catalog["nic.ethtool"], resolve(graph, "node002:mlx5_3", "nic"),
                    {"nope": "1"})
    with pytest.raises(RenderError, match="does not match"):
        fill_params(catalog["nic.ethtool"], resolve(graph, "node002:mlx5_3", "nic"),
                    {"netdev": "eth0; reboot"})
    pair = resolve(graph, "node001:mlx5_0,node002:mlx5_0", "node-pair")
    values = fill_params(catalog["perftest.ib_write_bw"], pair, {})
    assert values["device"] == "mlx5_0" and values["server_addr"] == "node002"
    assert values["size"] == 8 * 1024 * 1024 and "cuda" not in values
    argv = render_argv(catalog["perftest.ib_write_bw"].command.argv or [], values)
    assert argv[-1] == "node002" and not any(a.startswith("--use_cuda") for a in argv)


@pytest.mark.parametrize("text, kind, expected", [
    ("node001", "node", "node001"), ("node001:enp23s0f0np0", "nic", "node001:mlx5_0"),
    ("node003:gpu5", "gpu", "node003:gpu5"), ("leaf-g00-r3", "switch", "leaf-g00-r3"),
    ("leaf-g00-r3:Ethernet8", "port", "leaf-g00-r3:Ethernet8"),
    ("node002:mlx5_3", "port", "leaf-g00-r3:Ethernet8"), ("MT24000026", "port",
                                                          "leaf-g00-r3:Ethernet8"),
    ("node001:mlx5_2", "node", "node001"),
])
def test_targets_resolve_in_topology_terms(graph: FabricGraph, text: str, kind: TargetKind,
                                           expected: str) -> None:
    assert resolve(graph, text, kind).name == expected


@pytest.mark.parametrize("text, kind, message", [
    ("node042", "node", "is not a node, NIC, GPU"), ("node001:mlx5_9", "nic", "has no NIC"),
    ("node001:gpu9", "gpu", "has no GPU 9"), ("leaf-g00-r3", "nic", "is a switch: try"),
    ("node001", "node-pair", "is a node: try node001,node002"),
])
def test_bad_targets_say_what_would_work(graph: FabricGraph, text: str, kind: TargetKind,
                                         message: str) -> None:
    with pytest.raises(TargetError, match=message):
        resolve(graph, text, kind)


def test_counter_deltas_survive_resets_and_wraps() -> None:
    assert delta(100, 250) == (150, None)
    assert delta(2**32 - 10, 5, 32) == (15, "wrap")
    assert delta(2**64 - 100, 50) == (150, "wrap")
    assert delta(5_000_000, 1_000) == (1_000, "reset")
    moved = changes({"a": 10, "b": 2**32 - 1, "c": None, "gone": 1}, {"a": 40, "b": 9, "c": 3,
                                                                      "new": 7}, 5.0)
    assert set(moved) == {"a", "b"}
    assert moved["a"].rate == 6.0 and moved["b"].event == "wrap" and moved["b"].delta == 10
    assert ratio(moved["a"], moved["b"]) == 3.0
    assert ratio(moved["a"], None) is None


def test_gpu_nvml_without_a_driver_exits_cleanly(run: Callable[..., Result]) -> None:
    result = run("probe", "run", "gpu.nvml")
    if "no NVIDIA driver" not in result.stdout:  # pragma: no cover - a GPU machine
        pytest.skip("this machine has an NVIDIA driver")
    assert result.exit_code == 0
    assert result.stdout.startswith("gpu.nvml on localhost: ERROR")
    data = json.loads(run("probe", "run", "gpu.nvml", "--json").stdout)
    assert data["verdict"] == "error" and data["raw"][0]["error"] == "no-driver"


def test_probe_cli_bad_requests_exit_2(run: Callable[..., Result]) -> None:
    unknown = run("probe", "run", "nic.etool", "--target", "node001:mlx5_0")
    assert unknown.exit_code == 2 and "did you mean nic.ethtool" in unknown.stderr
    missing = run("probe", "run", "nic.ethtool")
    assert missing.exit_code == 2 and "give --target" in missing.stderr
    assert "gpu.nvml" in run("probe", "list").stdout


# end to end through a real sshd, reached through an ssh config file as users write them --------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    require_sshd()
    base = tmp_path_factory.mktemp("sshd-probe")
    base.chmod(0o700)
    srv = SshServer(base)
    yield srv
    srv.stop()


def _runner(server: SshServer, graph: FabricGraph) -> ProbeRunner:
    config = server.base / "ssh_config"
    config.write_text(f"Host node001 node002\n  HostName 127.0.0.1\n  Port {server.port}\n"
                      f"  User {server.user}\n  IdentityFile {server.client_key}\n"
                      f"  UserKnownHostsFile {server.known_hosts}\n"
                      "  HostKeyAlias fabtui-test\n")
    (server.base / "known_hosts").write_text(
        server.known_hosts.read_text() + "fabtui-test " +
        (server.base / "host_key.pub").read_text())
    options = server.options(config_file=config, identity=None, known_hosts=None)
    return ProbeRunner(graph, Transports(ssh=SshTransport(options)))


COUNTING = ("f={state}; n=$(cat $f 2>/dev/null || echo 0); echo $((n + 1)) > $f; "
            "printf 'NIC statistics:\\n     tx_prio3_pause: %s\\n"
            "     tx_prio3_pause_duration: %s\\n"
            "     link_down_events_phy: %s\\n     rx_bits_phy: %s\\n     "
            "rx_corrected_bits_phy: %s\\n' $((n * 5000)) $((n * 2500000)) $((n * 3)) "
            "$((n * 1000000000)) $((n * 20000))")


def test_a_counter_probe_over_ssh_computes_rates_and_verdicts(server: SshServer,
                                                              graph: FabricGraph,
                                                              tmp_path: Path) -> None:
    catalog = load_catalog([shipped_dir("probes")])
    shipped = catalog["nic.ethtool"]
    probe = shipped.model_copy(update={
        "command": shipped.command.model_copy(update={"argv": ["sh", "-c", COUNTING]}),
        "params": {"state": ProbeDef.model_validate({
            "name": "x", "description": "x", "target": "node", "transport": "ssh",
            "params": {"state": {"required": True}}}).params["state"]},
        "interval": 0.5})
    runner = _runner(server, graph)

    async def go() -> ProbeResult:
        try:
            return await runner.run(probe, "node001:mlx5_3", {"state": str(tmp_path / "n")})
        finally:
            await runner.close()

    result = asyncio.run(go())
    metrics = {m.name: m for m in result.metrics}
    elapsed = (result.raw[1].ended_at - result.raw[0].ended_at).total_seconds()
    # rates are per second of the time that really passed between the two replies
    assert metrics["rate.tx_prio3_pause"].value == pytest.approx(5000 / elapsed, rel=1e-3)
    assert metrics["pause_ratio.tx_prio3"].value == 1.0
    assert metrics["pause_ratio.tx_prio3"].verdict is Verdict.FAIL
    assert metrics["delta.link_down_events_phy"].value == 3
    assert metrics["delta.link_down_events_phy"].verdict is Verdict.WARN
    assert metrics["pre_fec_ber"].value == pytest.approx(2e-5)
    assert metrics["pre_fec_ber"].verdict is Verdict.FAIL
    assert all(m.component == "node001:mlx5_3" for m in result.metrics)
    assert result.verdict is Verdict.FAIL
    assert any(f.component == "node001:mlx5_3" and "pre_fec_ber" in f.rule
               for f in result.findings)
    assert len(result.raw) == 2 and all(r.transport == "ssh" for r in result.raw)


def test_an_unreachable_node_is_a_readable_error(graph: FabricGraph) -> None:
    from fabtui.transports.ssh import SshOptions

    catalog = load_catalog([shipped_dir("probes")])
    options = SshOptions(config_file=Path("/dev/null"), connect_timeout=2, multiplex=False,
                         known_hosts=Path("/dev/null"))
    runner = ProbeRunner(graph, Transports(ssh=SshTransport(options)))
    result = asyncio.run(runner.run(catalog["nic.ethtool"], "node001:mlx5_0"))
    assert result.verdict is Verdict.ERROR
    assert result.error and "node001" in result.error
    assert result.metrics == []


def test_hostile_parameter_over_ssh_is_data(server: SshServer, graph: FabricGraph) -> None:
    runner = _runner(server, graph)
    probe = _probe(parser="ethtool-stats",
                   command={"argv": ["sh", "-c", 'printf "NIC statistics:\\n x: 1\\n"; '
                                                 'printf "%s" "$1" > /dev/null', "sh",
                                     "{value}"]})

    async def go() -> ProbeResult:
        try:
            return await runner.run(probe, "node001", {"value": HOSTILE})
        finally:
            await runner.close()

    result = asyncio.run(go())
    assert result.verdict is Verdict.OK, result.error
    assert not Path("/tmp/fabtui-pwned").exists()
