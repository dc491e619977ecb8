"""Configuration faults and the configuration / scheduler / syslog commands of the demo fabric.

A `misconfig` fault must show wherever a real host or switch would show it (and nowhere else),
read back by the real parsers; the added commands refuse what the real tools refuse.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.errors import InputError
from fabtui.parsers import ibv_devinfo, show_gids
from fabtui.paths import demo_topology, shipped_templates
from fabtui.runbooks.functions import fabric_functions, template
from fabtui.sim import node_commands, switch_cli
from fabtui.sim.core import Sim
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state


def _sim(name: str) -> Sim:
    return build_sim(fresh_state(demo_topology(), find_scenario(name), [shipped_templates()]))


def _run(sim: Sim, host: str, *argv: str) -> tuple[str, str, int]:
    return node_commands.run(sim, host, list(argv), 60.0)


def _switch(sim: Sim, name: str, command: str) -> str:
    text, rejected = switch_cli.reply(sim, sim.graph.switches[name], command, 60.0)
    assert not rejected, text
    return text


def test_mtu_mismatch_shows_in_ibv_devinfo_of_that_nic_only() -> None:
    sim = _sim("mtu-mismatch")
    bad = ibv_devinfo.parse(_run(sim, "node005", "ibv_devinfo", "-d", "mlx5_2")[0])
    good = ibv_devinfo.parse(_run(sim, "node005", "ibv_devinfo", "-d", "mlx5_3")[0])
    assert bad.devices["mlx5_2"].ports["1"].active_mtu == 1024
    assert good.devices["mlx5_3"].ports["1"].active_mtu == 4096


def test_shifted_gid_index_moves_the_roce_v2_ipv4_entry() -> None:
    sim = _sim("rdma-gid-mismatch")
    bad = show_gids.parse(_run(sim, "node006", "show_gids", "mlx5_0")[0])
    good = show_gids.parse(_run(sim, "node006", "show_gids", "mlx5_1")[0])
    assert [g.index for g in bad.gids if g.version == "v2" and g.ipv4] == [5]
    assert [g.index for g in good.gids if g.version == "v2" and g.ipv4] == [3]
    # index 3 still exists on the bad NIC, as a RoCE v2 GID without IPv4: NCCL would use it
    assert [g for g in bad.gids if g.index == 3 and g.version == "v2" and not g.ipv4]


def test_firmware_is_the_same_in_every_tool_and_only_on_the_faulted_node() -> None:
    sim = _sim("new-node-bad-firmware")
    for host, version in (("node008", "28.36.1010"), ("node007", "28.39.1002")):
        assert f"Firmware version: {version}" in _run(sim, host, "ibstat", "mlx5_0")[0]
        assert f"fw_ver:\t\t\t\t{version}" in _run(sim, host, "ibv_devinfo")[0]
        assert f"firmware version: {version}" in _run(sim, host, "dmesg")[0]
        assert f"fw {version} port 1" in _run(sim, host, "ibdev2netdev", "-v")[0]


def test_qos_misconfig_shows_on_the_host_nic_and_the_leaf() -> None:
    sim = _sim("qos-misconfig")
    bad = _run(sim, "node002", "mlnx_qos", "-i", "enp153s0f0np0")[0]
    good = _run(sim, "node002", "mlnx_qos", "-i", "enp23s0f0np0")[0]
    assert "Priority trust state: pcp" in bad and "enabled     0   0   0   0   1" in bad
    assert "Priority trust state: dscp" in good and "enabled     0   0   0   1   0" in good
    assert "green_min_threshold      1536000" in _switch(sim, "leaf-g00-r4", "show ecn")
    assert "green_min_threshold      153600" in _switch(sim, "leaf-g00-r3", "show ecn")
    assert _run(sim, "node002", "cat", "/sys/class/net/enp23s0f0np0/ecn/roce_np/cnp_dscp")[0] \
        == "48\n"


def test_healthy_switch_qos_commands_match_the_template() -> None:
    sim, qos = _sim("healthy"), template("roce-qos")
    priority = _switch(sim, "leaf-g00-r0", "show pfc priority")
    assert "Ethernet0   " + ",".join(str(p) for p in qos["switch"]["pfc_priorities"]) in priority
    assert " 26:3 " in _switch(sim, "leaf-g00-r0", "show qos dscp-to-tc")
    from fabtui.topology.headroom import XON, xoff_needed

    # the dynamic buffer model: one lossless profile per cable length, sized for it (rail 0's
    # cables are 30 m AOCs in the demo topology), every one above the template's minimum
    headroom = _switch(sim, "leaf-g00-r0", "mmuconfig -l")
    assert "Profile: pg_lossless_400000_30m_profile" in headroom
    assert f"xoff        {xoff_needed(400, 30)}\nsize        {xoff_needed(400, 30) + XON}" \
        in headroom
    five = _switch(sim, "leaf-g00-r1", "mmuconfig -l")
    assert f"size        {xoff_needed(400, 5) + XON}" in five
    assert xoff_needed(400, 5) + XON >= qos["switch"]["headroom_min_kb"] * 1024


def test_scontrol_refuses_a_drain_without_reason_and_an_unknown_node() -> None:
    sim = _sim("healthy")
    assert _run(sim, "node001", "scontrol", "update", "nodename=node003", "state=drain")[2] == 1
    assert _run(sim, "node001", "scontrol", "update", "nodename=node999", "state=resume")[2] == 1
    assert _run(sim, "node001", "scontrol", "update", "nodename=node003", "state=drain",
                "reason=optic")[2] == 0
    out = _run(sim, "node001", "squeue", "-h", "-w", "node003", "-o", "%i %j %u %N")[0]
    assert out == "4242 llm-pretrain mlops node[001-008]\n"


def test_switch_syslog_stamps_the_same_flaps_the_node_logs() -> None:
    sim = _sim("link-flap")
    log = switch_cli.reply(sim, sim.graph.switches["leaf-g00-r1"], "show logging", 620.0)[0]
    downs = [line for line in log.splitlines()
             if "Ethernet32 oper state set from up to down" in line]
    kernel = node_commands.run(sim, "node005", ["dmesg", "-T"], 620.0)[0]
    host = [line for line in kernel.splitlines() if "enp41s0f0np0: Link down" in line]
    assert len(downs) == len(host) == 9  # every flap, at both ends
    assert [d.split()[2][:8] for d in downs] == [h.split()[3] for h in host]
    assert "Ethernet0 " not in log  # only the flapping port changed state


def test_a_misconfig_fault_without_its_setting_is_an_input_error(tmp_path: Path) -> None:
    from fabtui.sim.scenario import load_scenario

    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\ntimeline:\n  - fault: misconfig\n    component: node001\n")
    with pytest.raises(InputError, match=r"params\.setting"):
        build_sim(fresh_state(demo_topology(), path, [shipped_templates()]))
    assert load_scenario(path).scenario.name == "bad"


def test_template_and_blast_functions() -> None:
    assert template("fleet")["nic"]["gid_index"] == 3
    with pytest.raises(ValueError, match="no template"):
        template("nothing-here")
    with pytest.raises(ValueError, match="lower-case"):
        template("../secrets")
    sim = _sim("healthy")
    functions = fabric_functions(sim.graph)
    radius = functions["blast"]("node003:mlx5_5")
    assert [n["node"] for n in radius["nodes"] if n["injection_lost"] > 0] == ["node003"]
    assert functions["netdev"]("node003:mlx5_0") == "enp23s0f0np0"
    assert functions["nic_speed"]("node003:mlx5_0") == 400
    with pytest.raises(ValueError):
        functions["blast"]("leaf-x9")


def test_a_nodes_nccl_conf_shows_in_the_job_log_and_halves_its_runs() -> None:
    sim = _sim("nccl-env-misconfig")
    log = node_commands.run(sim, "node001", ["cat", "/var/log/fabtui-sim/job.log"], 60.0)[0]
    node4 = [line for line in log.splitlines() if "node004:" in line]
    assert any("NCCL_IB_HCA set by environment to mlx5_0,mlx5_1,mlx5_2,mlx5_3." in line
               for line in node4)
    assert any("NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE "
               "[3]mlx5_3:1/RoCE [RO]" in line for line in node4)
    assert not any("NCCL_IB_HCA" in line for line in log.splitlines() if "node005:" in line)

    def busbw(*extra: str, hosts: str = "node004:8,node005:8") -> float:
        argv = ["mpirun", "-np", "16", "-H", hosts, *extra,
                "/opt/nccl-tests/build/all_reduce_perf", "-b", "16G", "-e", "16G"]
        out = node_commands.run(sim, hosts.split(":")[0], argv, 60.0)[0]
        row = next(line for line in out.splitlines()
                   if line.split(":", 1)[-1].split()[:1] == ["17179869184"])
        return float(row.split()[-2])

    healthy_pair = busbw(hosts="node005:8,node006:8")
    assert busbw() == pytest.approx(healthy_pair / 2, rel=0.02)
    assert busbw("-x", "NCCL_IB_HCA=mlx5") == pytest.approx(healthy_pair, rel=0.02)
    assert busbw("-x", "NCCL_IB_HCA=^mlx5_7") == pytest.approx(healthy_pair * 7 / 8, rel=0.02)
