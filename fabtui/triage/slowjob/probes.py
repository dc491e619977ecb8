"""The cheapest check that would confirm a hop: a catalog probe (probes/*.toml), the command a
person types (values quoted for a shell), and the runbook (runbooks/*.md) that walks the rest.

Cheapest first: one read of a counter on one device (a port's FEC, a leaf's PFC, a GPU's clocks)
before a collective across nodes; a rail-pinned pair test (`nccl.mpirun` over two nodes with
`NCCL_IB_HCA` on that rail's NIC) only where nothing cheaper isolates the rail. No side effects.
"""

from __future__ import annotations

import shlex

from fabtui.model.slowjob import Probe


def _run(probe: str, target: str, **params: str) -> str:
    parts = ["fabtui", "probe", "run", probe, "--target", shlex.quote(target)]
    for name, value in params.items():
        parts += ["--param", shlex.quote(f"{name}={value}")]
    return " ".join(parts)


FEC_FLAVORS = frozenset({"sonic"})
"""The switch flavors `switch.fec` has a command for (probes/switch.toml: SONiC's fec-stats;
EOS has none in the catalog)."""


def port_errors(switch: str, flavor: str | None, port: str) -> Probe:
    """The cheapest read of a switch port's receive errors that runs on this switch: its FEC
    counters where the catalog has a command for the flavor, else the optic's light in that port
    (`switch.dom`, which every flavor has): a printed command must run as printed."""
    return port_fec(switch) if flavor in FEC_FLAVORS else port_dom(port)


def port_fec(switch: str) -> Probe:
    """A switch's FEC counters (corrected / uncorrectable per port, pre-FEC BER)."""
    return Probe(probe="switch.fec", target=switch, command=_run("switch.fec", switch),
                 runbook="optic-replacement")


def port_dom(port: str) -> Probe:
    """The optic's receive and launch power in one port."""
    return Probe(probe="switch.dom", target=port, command=_run("switch.dom", port),
                 runbook="optic-replacement")


def port_state(switch: str) -> Probe:
    """A switch's interface counters: which ports are up, their rates."""
    return Probe(probe="switch.counters", target=switch, command=_run("switch.counters", switch),
                 runbook="busbw-low")


def leaf_pfc(switch: str, runbook: str = "multi-job-interference") -> Probe:
    """A switch's PFC counters (pause share per port and priority)."""
    return Probe(probe="switch.pfc", target=switch, command=_run("switch.pfc", switch),
                 runbook=runbook)


def nic_link(nic: str) -> Probe:
    """A NIC's own view of its link: FEC, pre-FEC BER, the light its optic receives."""
    return Probe(probe="nic.mlxlink", target=nic, command=_run("nic.mlxlink", nic),
                 runbook="optic-replacement")


def nic_rate(nic: str) -> Probe:
    """A NIC's port state and the rate its link trained at."""
    return Probe(probe="nic.ibstat", target=nic, command=_run("nic.ibstat", nic),
                 runbook="busbw-low")


def nic_congestion(nic: str) -> Probe:
    """A NIC's RDMA counters (CNPs, out-of-sequence)."""
    return Probe(probe="nic.rdma_statistic", target=nic,
                 command=_run("nic.rdma_statistic", nic), runbook="busbw-low")


def rail_pair(nodes: list[str], nic: str, gpus: int = 8) -> Probe:
    """A ring all_reduce between two nodes (the suspect first) pinned to one rail's NIC."""
    pair = list(dict.fromkeys(nodes))[:2]
    hosts = ",".join(f"{n}:{gpus}" for n in pair)
    return Probe(probe="nccl.mpirun", target=pair[0],
                 command=_run("nccl.mpirun", pair[0], hosts=hosts, ranks=str(gpus * len(pair)),
                              nccl_env=f"NCCL_IB_HCA=={nic}", nccl_env2="NCCL_ALGO=Ring"),
                 runbook="busbw-low")


def gpu_clocks(node: str) -> Probe:
    """A node's GPUs: clocks, throttle reasons, temperatures."""
    return Probe(probe="gpu.smi_q", target=node, command=_run("gpu.smi_q", node),
                 runbook="slow-node")


def host_log(node: str) -> Probe:
    """A node's kernel log (Xids, hung tasks, OOM, NIC resets)."""
    return Probe(probe="logs.dmesg", target=node, command=_run("logs.dmesg", node),
                 runbook="slow-node")


JOB_LOG = "‹job-log›"
"""What a printed `logs.nccl` check names the job's log when the inputs do not say where it is
on the nodes: a placeholder the person fills in (as a dry run shows a value it cannot know)."""


def nccl_log(node: str, path: str | None) -> Probe:
    """The job's NCCL log on a node (its NCCL_* settings, PXN, rings): `path` as the inputs
    name it on the nodes (`SlowJobInputs.job_log`), else `JOB_LOG` to fill in."""
    return Probe(probe="logs.nccl", target=node,
                 command=_run("logs.nccl", node, path=path or JOB_LOG),
                 runbook="nccl-perf-tuning")


def gpu_busy(node: str) -> Probe:
    """A node's GPU utilisation (idle GPUs between steps: the job waits on its input)."""
    return Probe(probe="gpu.smi", target=node, command=_run("gpu.smi", node))
