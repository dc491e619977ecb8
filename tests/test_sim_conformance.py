"""The simulated devices print what real devices print (issue 35, Deliver 2).

For every simulated command that has a real capture (tests/fixtures/<kind>/, the real ones named
in their SOURCES.md; the shared samples are the same files), the command is run on the demo
fabric and both texts go through the same parsers:

- the parser kind detected is the same (and is the kind the command is known by);
- the real capture's fields are all present in the simulated output (structure: models'
  fields, with element names such as ports or GPUs as `*`), except the ones listed with their
  reason in the row;
- every line shape the simulation prints (`key: value`, padded ` : ` columns, tables, rules,
  XML, ...) is one the real capture has too.

The hang logs' real format (completion errors naming the OOB peer) is checked line by line in
test_hang_real_format.py. `UNSAMPLED` lists the simulated commands without a real capture, each
with its reason; the meta-check keeps that list equal to what the simulator answers, so a
new simulated command without a sample shows up here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from fabtui.model.topology import Flavor
from fabtui.parsers import registry
from fabtui.paths import demo_topology, shipped_templates
from fabtui.runbooks.testing import case_topology
from fabtui.sim.core import Sim
from fabtui.sim.node_commands import _COMMANDS, run
from fabtui.sim.scenario import find_scenario
from fabtui.sim.state import build_sim, fresh_state
from fabtui.sim.switch_cli import reply

FIXTURES = Path(__file__).parent / "fixtures"
T = 1500.0


@dataclass(frozen=True)
class Row:
    """One simulated command and the real capture it must look like."""

    name: str
    kind: str
    sample: str
    """`<kind folder>/<file>` under tests/fixtures: a real capture (its SOURCES.md row)."""
    run: Callable[[Sim], str]
    missing: dict[str, str] = field(default_factory=dict)
    """Field paths of the real capture the simulation does not print, each with why."""
    shapes: dict[str, str] = field(default_factory=dict)
    """Line shapes the simulation prints that the capture lacks, each with why."""
    fabric: str = "roce"
    """`infiniband`: run on the demo's IB variant (template h100-64gpu-ib, scenario
    ib-bad-cable) instead of the RoCE demo."""


def node(host: str, *argv: str) -> Callable[[Sim], str]:
    def go(sim: Sim) -> str:
        out, err, status = run(sim, host, list(argv), T)
        assert status == 0, err
        return out
    return go


def switch(name: str, command: str, flavor: Flavor | None = None) -> Callable[[Sim], str]:
    def go(sim: Sim) -> str:
        device = sim.graph.switches[name]
        if flavor is not None:
            device = device.model_copy(update={"flavor": flavor})
        text, rejected = reply(sim, device, command, T)
        assert not rejected, text
        return text
    return go


def pair(tool: str) -> Callable[[Sim], str]:
    """The client side of a perftest pair (the server listens on node002)."""
    def go(sim: Sim) -> str:
        server = run(sim, "node002", [tool, "-d", "mlx5_0", "-F", "--report_gbits"], T)
        assert server[2] == 0, server[1]
        out, err, status = run(sim, "node001", [tool, "-d", "mlx5_0", "-F", "--report_gbits",
                                                "node002"], T)
        assert status == 0, err
        return out
    return go


PROMPT = {name: "read from the prompt line the capture starts with (the tool and its arguments)"
          for name in ("command", "tool", "results[].command", "results[].tool")}
CX3 = {"notices": "ConnectX-3's `WR postsend API` warnings; a ConnectX-7 has it"}


def pair_side(tool: str, side: str, *flags: str) -> Callable[[Sim], str]:
    """One side of a perftest pair: the server (listening on node002) or the client."""
    def go(sim: Sim) -> str:
        server = run(sim, "node002", [tool, "-d", "mlx5_0", *flags], T)
        assert server[2] == 0, server[1]
        if side == "server":
            return server[0]
        out, err, status = run(sim, "node001", [tool, "-d", "mlx5_0", *flags, "node002"], T)
        assert status == 0, err
        return out
    return go


ROWS = [
    Row("ethtool -S", "ethtool-stats",
        "ethtool-stats/lkml-ethtool-S-mlx5-xdp-kernel-5.15-nonzero.txt",
        node("node003", "ethtool", "-S", "enp92s0f0np0")),
    Row("rdma statistic show", "rdma-statistic",
        "rdma-statistic/cnnotes-rdma-statistic-show-4links-cx4lx.txt",
        node("node003", "rdma", "statistic", "show")),
    Row("show_counters", "rdma-hw-counters",
        "rdma-hw-counters/cnnotes-show_counters-mlx5_bond_0-cnp-ecn-out_of_sequence.txt",
        node("node003", "show_counters", "mlx5_3")),
    Row("ibstat", "ibstat", "ibstat/felixfu-ibstat-cx3-fdr10.txt", node("node003", "ibstat"),
        missing={"cas.*.ports.*.rate_info": "InfiniBand's speed name (`40 (FDR10)`); a RoCE "
                 "port's ibstat prints the rate alone"}),
    Row("ibv_devinfo", "ibv_devinfo", "ibv_devinfo/felixfu-ibv_devinfo-cx3-ib.txt",
        node("node003", "ibv_devinfo")),
    Row("ibstat (InfiniBand)", "ibstat", "ibstat/felixfu-ibstat-cx3-fdr10.txt",
        node("node003", "ibstat"), fabric="infiniband",
        missing={"cas.*.ports.*.rate_info": "ibstat adds a speed name only for FDR10 "
                 "(`40 (FDR10)`); an NDR port prints `Rate: 400`"}),
    Row("ibv_devinfo (InfiniBand)", "ibv_devinfo", "ibv_devinfo/felixfu-ibv_devinfo-cx3-ib.txt",
        node("node003", "ibv_devinfo"), fabric="infiniband"),
    Row("perfquery -x LID PORT (switch port)", "perfquery",
        "perfquery/infiniband-exporter-perfquery-x-switch-2ports.txt",
        node("node001", "perfquery", "-x", "4", "3"), fabric="infiniband"),
    Row("perfquery -x -C DEV -P 1 (HCA port)", "perfquery",
        "perfquery/infiniband-exporter-perfquery-x-switch-2ports.txt",
        node("node003", "perfquery", "-x", "-C", "mlx5_3", "-P", "1"), fabric="infiniband"),
    Row("ibnetdiscover", "ibnetdiscover", "ibnetdiscover/blog-ibnetdiscover-qm9700-redacted.txt",
        node("node001", "ibnetdiscover"), fabric="infiniband",
        shapes={"columns": "the CA blocks' `[1](guid) \\t\"S-...\"[N]` port lines; the capture "
                "was cut (`...omitted`) before its CA blocks (their layout: the synthetic NDR "
                "fixture beside it, from infiniband-diags' ibnetdiscover.c)"}),
    Row("ibdiagnet", "ibdiagnet", "ibdiagnet/ydanzig-ibdiagnet-2.7.0-42nodes-width-errors.txt",
        node("node001", "ibdiagnet", "--pm_pause_time", "30"), fabric="infiniband",
        shapes={"key: value": "the port-counter `-E- S.../N.../Pn - \"counter\" increased "
                "during the run (...)` lines (ibdiagnet2.log's message, SOURCES.md)"}),
    Row("cat /var/log/opensm.log", "opensm-log",
        "opensm-log/ibsim-opensm-trap128-link-down-heavy-sweep.txt",
        node("node001", "cat", "/var/log/opensm.log"), fabric="infiniband"),
    Row("show_gids", "show-gids", "show-gids/slurmv4-show_gids-mlx5_0-roce.txt",
        node("node003", "show_gids", "mlx5_0")),
    Row("ibdev2netdev", "ibdev2netdev", "ibdev2netdev/slurmv4-ibdev2netdev-12hca-roce.txt",
        node("node003", "ibdev2netdev")),
    Row("mlxlink -m -c -e", "mlxlink", "mlxlink/sonic-doc-mlxlink-sn2700-25gbe-port.txt",
        node("node001", "mlxlink", "-d", "mlx5_0", "-m", "-c", "-e"),
        missing={"device": "read from the prompt line the capture starts with (`-d ...`)",
                 "port": "read from the prompt line the capture starts with (`-p 0x2`)"}),
    Row("nvidia-smi -q -x", "nvidia-smi-q",
        "nvidia-smi-q/telegraf-nvidia-smi-q-x-a100-sxm4-80gb-mig.xml",
        node("node004", "nvidia-smi", "-q", "-x"),
        missing={"gpus[].mig_devices": "the capture's A100 runs MIG; the demo's GPUs do not"}),
    Row("nvidia-smi", "nvidia-smi", "nvidia-smi/mockdata-nvidia-smi-8xV100-550.127.05.txt",
        node("node004", "nvidia-smi")),
    Row("nvidia-smi topo -m", "nvidia-smi-topo",
        "nvidia-smi-topo/mlengineering-topo-m-h100-8gpu.txt",
        node("node004", "nvidia-smi", "topo", "-m"),
        shapes={"key: value": "the `NIC Legend` (`  NIC0: mlx5_0`) nvidia-smi prints when the "
                "node has NICs; the real H100 capture shows none"}),
    Row("dmesg", "kernel-log", "kernel-log/slurmv4-dmesg-mlx5-link-flap-bond-slave.txt",
        node("node003", "dmesg"),
        missing={"events[].bond": "the capture's NICs are bond members; the demo's are not",
                 "events[].port": "the capture's RDMA port-state lines come with its bond",
                 "port_downs": "as above: RDMA port DOWN lines of the bonded ports"}),
    Row("dcgmi diag -r 2", "dcgmi-diag",
        "dcgmi-diag/awsome-dcgmi-diag-r2-p4de-nvlinks-expected.txt",
        node("node004", "dcgmi", "diag", "-r", "2"),
        missing={"level": "read from the prompt line the capture starts with (`-r 2`)"}),
    Row("ib_write_bw (client)", "perftest", "perftest/felixfu-ib_write_bw-cx3-ib-client.txt",
        pair("ib_write_bw"),
        missing={**{name: "read from the prompt line the capture starts with (the tool "
                    "and its arguments)" for name in ("command", "tool", "results[].command",
                                                      "results[].tool")},
                 "notices": "ConnectX-3's `WR postsend API` warnings; a ConnectX-7 has it"}),
    Row("all_reduce_perf (mpirun)", "nccl-tests",
        "nccl-tests/awsome-allreduce-2node-p5-eks-mpirun-prefix-elided.txt",
        node("node001", "mpirun", "-H", "node001:8,node002:8", "-np", "16",
             "all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2")),
    Row("all_reduce_perf (one node)", "nccl-tests", "nccl-tests/superbench-allreduce-8xA100-c0.txt",
        node("node001", "all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "8")),
    Row("ib_write_bw (server)", "perftest", "perftest/felixfu-ib_write_bw-cx3-ib-server.txt",
        pair_side("ib_write_bw", "server", "-F", "--report_gbits"),
        missing={**PROMPT, **CX3}),
    Row("ib_send_bw (client)", "perftest", "perftest/cnnotes-ib_send_bw-a-roce-10g-client.txt",
        pair_side("ib_send_bw", "client", "-a", "-F"), missing=PROMPT),
    Row("ib_send_bw (server)", "perftest", "perftest/cnnotes-ib_send_bw-a-roce-10g-server.txt",
        pair_side("ib_send_bw", "server", "-a", "-F"), missing=PROMPT),
    Row("ib_write_lat (client)", "perftest", "perftest/felixfu-ib_write_lat-cx3-ib-client.txt",
        pair_side("ib_write_lat", "client"), missing={**PROMPT, **CX3}),
    Row("ib_write_lat (server)", "perftest", "perftest/felixfu-ib_write_lat-cx3-ib-server.txt",
        pair_side("ib_write_lat", "server"), missing={**PROMPT, **CX3}),
    Row("alltoall_perf (one node)", "nccl-tests", "nccl-tests/superbench-alltoall-8xA100-c0.txt",
        node("node001", "alltoall_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "8")),
    Row("all_gather_perf (one node)", "nccl-tests",
        "nccl-tests/superbench-allgather-8xA100-c0.txt",
        node("node001", "all_gather_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "8")),
    Row("cat job.log", "nccl-log",
        "nccl-log/slurmv4-nccl-2.27.5-full-init-2node-16gpu-roce-gdrdma.txt",
        node("node001", "cat", "/var/log/fabtui-sim/job.log"),
        missing={"net_plugins": "the capture loads a net plugin; the demo job uses NCCL's "
                 "built-in IB transport", "ofi_provider": "AWS OFI plugin (EFA) only",
                 "cuda_driver_version": "NCCL prints `cudaDriverVersion` from 2.23 "
                 "(the capture is 2.27.5); the demo job runs 2.21"},
        shapes={"key: value": "`srun -l` prefixes each line with its rank (`0: `), which "
                "reads as a key; the capture was not launched with -l"}),
    Row("scontrol show job -d", "scontrol-job",
        "scontrol-job/tgcc-scontrol-show-job-d-4node-512tasks.txt",
        node("node001", "scontrol", "show", "job", "-d", "4242")),
    Row("squeue --json", "squeue-json", "squeue-json/restd-jobs-24.05.3-v0.0.41.json",
        node("node001", "squeue", "--json")),
    Row("sacct -P", "sacct", "sacct/megware-sacct-X-P-format-all-20.11.txt",
        node("node001", "sacct", "-P", "-X", "-o", "JobID,JobName,Partition,Account,AllocCPUS,"
             "State,ExitCode,NodeList", "-j", "4242")),
    Row("SONiC show interfaces counters", "switch-counters",
        "switch-counters/sonic-show-interfaces-counters-all.txt",
        switch("leaf-g00-r3", "show interfaces counters"),
        missing={f"interfaces.*.{name}": "SONiC's packet-trimming columns (TRIM_*), a "
                 "feature the demo's leaves do not run" for name in
                 ("trim_packets", "trim_tx_packets", "trim_drop_packets")}),
    Row("SONiC fec-stats", "fec-stats", "fec-stats/sonic-show-interfaces-counters-fec-stats.txt",
        switch("leaf-g00-r3", "show interfaces counters fec-stats"),
        missing={f"interfaces.*.{name}": "a later sonic-utilities layout (FLR columns, "
                 "202505, PR 4124; FEC_MAX_T); the demo prints the one with the BER columns"
                 for name in ("fec_max_t", "flr_observed", "flr_predicted",
                              "flr_predicted_accuracy_pct")}),
    Row("SONiC fec-histogram", "fec-stats",
        "fec-stats/sonic-swss-pr3919-fec-histogram-ethernet48.txt",
        switch("leaf-g00-r3", "show interfaces counters fec-histogram Ethernet16"),
        missing={"command": "read from the prompt line the capture starts with"}),
    Row("SONiC show pfc counters", "pfc-counters", "pfc-counters/sonic-show-pfc-counters.txt",
        switch("leaf-g00-r3", "show pfc counters")),
    Row("SONiC show pfc counters --history", "pfc-counters",
        "pfc-counters/sonic-show-pfc-counters-history.txt",
        switch("leaf-g00-r4", "show pfc counters --history")),
    Row("SONiC show pfcwd stats", "pfcwd", "pfcwd/sonic-utilities-pfcwd-show-stats.txt",
        switch("leaf-g00-r3", "show pfcwd stats")),
    Row("SONiC show pfcwd config", "pfcwd", "pfcwd/sonic-utilities-pfcwd-show-config-history.txt",
        switch("leaf-g00-r3", "show pfcwd config")),
    Row("SONiC show queue counters", "queue-counters",
        "queue-counters/sonic-show-queue-counters.txt",
        switch("leaf-g00-r3", "show queue counters Ethernet16")),
    Row("mlnx_qos", "mlnx-qos", "mlnx-qos/blog-mlnx-qos-cx-dscp-pfc3-firmware-dcbx.txt",
        node("node001", "mlnx_qos", "-i", "enp23s0f0np0")),
    Row("SONiC show runningconfiguration all", "sonic-config-db",
        "sonic-config-db/sonic-buildimage-qos-nokia-ixr7250e-36x400g-excerpt.json",
        switch("leaf-g00-r0", "show runningconfiguration all")),
    Row("ethtool -i", "ethtool-info", "ethtool-info/blog-ethtool-i-cx7-mlnx-ofed-23.10.txt",
        node("node001", "ethtool", "-i", "enp23s0f0np0")),
    Row("SONiC show version", "switch-version",
        "switch-version/sonic-utilities-command-reference-show-version.txt",
        switch("leaf-g00-r0", "show version")),
    Row("EOS show version", "switch-version",
        "switch-version/lab-notes-eos-show-version-7280sr3k.txt",
        switch("spine-01", "show version"),
        missing={"serial": "the demo spines print no serial number"}),
    Row("EOS show running-config", "eos-running-config",
        "eos-running-config/lab-notes-veos-show-running-config-excerpt.txt",
        switch("spine-01", "show running-config")),
    Row("SONiC mmuconfig -l", "buffer-profiles", "buffer-profiles/sonic-utilities-mmuconfig-l.txt",
        switch("leaf-g00-r0", "mmuconfig -l")),
    Row("SONiC show queue wredcounters", "queue-counters",
        "queue-counters/sonic-utilities-show-queue-wredcounters-ethernet8.txt",
        switch("leaf-g00-r3", "show queue wredcounters Ethernet16")),
    Row("SONiC transceiver eeprom --dom", "transceiver-dom",
        "transceiver-dom/sonic-show-interfaces-transceiver-eeprom-dom-qsfpdd.txt",
        switch("leaf-g00-r3", "show interfaces transceiver eeprom --dom Ethernet16")),
    Row("SONiC show lldp table", "lldp-neighbors",
        "lldp-neighbors/sonic-cmdref-show-lldp-table.txt",
        switch("leaf-g00-r3", "show lldp table")),
    Row("EOS show interfaces", "switch-counters", "switch-counters/arista-eos-show-interfaces.txt",
        switch("spine-01", "show interfaces Ethernet1/1")),
    Row("EOS show interfaces transceiver", "transceiver-dom",
        "transceiver-dom/arista-eos-show-interfaces-transceiver.txt",
        switch("spine-01", "show interfaces transceiver")),
    Row("EOS show interfaces transceiver detail", "transceiver-dom",
        "transceiver-dom/arista-eos-show-interfaces-transceiver-detail.txt",
        switch("spine-01", "show interfaces Ethernet1/1 transceiver detail")),
    Row("EOS show lldp neighbors", "lldp-neighbors",
        "lldp-neighbors/avd-ceos-4.25-show-lldp-neighbors-trailing-spaces.txt",
        switch("spine-01", "show lldp neighbors")),
    Row("NVUE nv show interface X counters", "switch-counters",
        "switch-counters/cumulus-nvue-nv-show-interface-swp1-counters.txt",
        switch("leaf-g00-r3", "nv show interface Ethernet16 counters", Flavor.NVUE),
        missing={"command": "read from the prompt line the capture starts with"}),
]


UNSAMPLED: dict[str, str] = {
    # node programs
    "cma_roce_mode": "no real capture in shared/samples or the fixtures; no parser reads it",
    "grep -H": "no real capture with provenance: GNU grep's documented FILE:LINE "
               "(tests/fixtures/file-values, synthetic)",
    "ethtool --get-tunable": "no real capture; one line `pfc-prevention-tout: N` (ethtool.c)",
    "cat (sysfs, rank logs)": "sysfs files are one value each; rank-N.log is job.log unprefixed",
    "tail": "the same file reader as cat",
    "perfquery (RoCE)": "the RoCE demo answers with perfquery's own IB error, nothing to "
                        "parse; the IB variant's rows are checked above",
    "sminfo": "one line, no parser (ib-fabric-triage captures it by regex); that regex is "
              "checked on real lines and the simulated one in test_sim_ib.py",
    "lsmod": "no real capture; read for one module name",
    "hostname": "one word",
    "uptime": "no parser reads it",
    "echo": "the shell's echo",
    "sh": "runs the other commands",
    "true": "no output",
    "false": "no output",
    "pkill": "no output",
    "nvidia-smi nvlink -e": "no real capture in the fixtures",
    "mlxlink --rx_fec_histogram --show_histogram": "no real text capture found; the section "
                                                   "as mstflint MlxlinkPortInfo::showHistogram "
                                                   "prints it (tests/fixtures/mlxlink)",
    "mlxlink --pc": "no real capture of a counter clear; the Operational Info as in the "
                    "`-m -c -e` row, then `Clearing Counters...` as mstflint "
                    "MlxlinkRecord::printCmdLine prints it (tests/test_sim_counter_clear.py)",
    "scontrol show node / update / requeue": "no real capture; only `show job` has one",
    "squeue -w": "no real capture; only --json has one",
    "ib_read_bw / ib_send_lat / ib_read_lat": "no real capture (only a synthetic "
                                              "three-run paste); the same layout as the "
                                              "ib_write_bw / ib_send_bw / ib_write_lat rows",
    # switch commands
    "SONiC show interfaces status": "no real capture; no parser",
    "SONiC show logging": "no real capture; syslog lines as SONiC writes them",
    "SONiC show pfc priority": "no real capture; read by roce-qos-audit",
    "SONiC show ecn": "no real capture; read by roce-qos-audit",
    "SONiC show qos dscp-to-tc": "sim shorthand for DSCP_TO_TC_MAP (docs/sim.md)",
    "EOS show interfaces counters errors": "only a synthetic capture (synthetic-review-eos-"
                                           "counters-errors), no real one",
    "NVUE nv show interface": "no real capture of the table form the sim prints",
}

SIMULATED_NODE_PROGRAMS = {
    "ethtool": ["ethtool -S", "ethtool --get-tunable", "ethtool -i"],
    "rdma": ["rdma statistic show"], "show_counters": ["show_counters"],
    "ibstat": ["ibstat", "ibstat (InfiniBand)"],
    "ibv_devinfo": ["ibv_devinfo", "ibv_devinfo (InfiniBand)"], "show_gids": ["show_gids"],
    "ibdev2netdev": ["ibdev2netdev"], "mlxlink": ["mlxlink -m -c -e",
                                                  "mlxlink --rx_fec_histogram --show_histogram",
                                                  "mlxlink --pc"],
    "nvidia-smi": ["nvidia-smi -q -x", "nvidia-smi", "nvidia-smi topo -m",
                   "nvidia-smi nvlink -e"],
    "tail": ["tail"], "cat": ["cat job.log", "cat (sysfs, rank logs)",
                                                  "cat /var/log/opensm.log"], "dmesg": ["dmesg"],
    "dcgmi": ["dcgmi diag -r 2"],
    "perfquery": ["perfquery (RoCE)", "perfquery -x LID PORT (switch port)",
                  "perfquery -x -C DEV -P 1 (HCA port)"],
    "ibnetdiscover": ["ibnetdiscover"], "sminfo": ["sminfo"], "ibdiagnet": ["ibdiagnet"],
    "lsmod": ["lsmod"],
    "hostname": ["hostname"], "true": ["true"], "false": ["false"], "echo": ["echo"],
    "sh": ["sh"], "pkill": ["pkill"], "uptime": ["uptime"],
    "ib_write_bw": ["ib_write_bw (client)"], "mlnx_qos": ["mlnx_qos"],
    "cma_roce_mode": ["cma_roce_mode"], "grep": ["grep -H"],
    "scontrol": ["scontrol show job -d", "scontrol show node / update / requeue"],
    "squeue": ["squeue --json", "squeue -w"], "sacct": ["sacct -P"],
}
"""Every program the simulated node answers (node_commands._COMMANDS) -> the rows or
UNSAMPLED entries that cover what it prints; the perftest family beyond ib_write_bw is one
UNSAMPLED entry."""
SIMULATED_SWITCH_COMMANDS = [
    "SONiC show interfaces counters", "SONiC fec-stats", "SONiC fec-histogram",
    "SONiC show pfc counters", "SONiC show pfc counters --history", "SONiC show pfcwd stats",
    "SONiC show pfcwd config", "SONiC show queue counters",
    "SONiC show queue wredcounters", "SONiC transceiver eeprom --dom",
    "SONiC show lldp table", "SONiC show interfaces status", "SONiC show logging",
    "SONiC show pfc priority", "SONiC show ecn", "SONiC show qos dscp-to-tc",
    "SONiC mmuconfig -l", "SONiC show runningconfiguration all", "SONiC show version",
    "EOS show interfaces", "EOS show running-config", "EOS show interfaces counters errors",
    "EOS show interfaces transceiver", "EOS show interfaces transceiver detail",
    "EOS show lldp neighbors", "EOS show version", "NVUE nv show interface",
    "NVUE nv show interface X counters",
]
"""The switch commands docs/sim.md lists (every flavor)."""


PERFTEST_FAMILY = ["ib_write_bw (server)", "ib_send_bw (client)", "ib_send_bw (server)",
                   "ib_write_lat (client)", "ib_write_lat (server)",
                   "ib_read_bw / ib_send_lat / ib_read_lat"]
"""The perftest programs beyond ib_write_bw's client (each side prints its own report)."""
NCCL_TESTS = ["all_reduce_perf (mpirun)", "all_reduce_perf (one node)",
              "alltoall_perf (one node)", "all_gather_perf (one node)"]
"""The nccl-tests binaries (`*_perf`, under mpirun/srun or alone) with a real capture."""


# fields and line shapes ---------------------------------------------------------------------
def fields(value: Any, path: str = "") -> set[str]:
    """The field paths `value` fills: a model's non-empty fields, a mapping's entries as `*`
    (ports, GPUs, counters), a list's items as `[]`."""
    found: set[str] = set()
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            if name in ("kind", "schema_version", "warnings"):
                continue
            inner = getattr(value, name)
            if inner is None or inner == {} or inner == [] or inner == "":
                continue
            here = f"{path}.{name}" if path else name
            found.add(here)
            found |= fields(inner, here)
    elif isinstance(value, dict):
        for inner in value.values():
            found |= fields(inner, f"{path}.*")
    elif isinstance(value, list):
        for inner in value:
            found |= fields(inner, f"{path}[]")
    return found


_RULE = re.compile(r"^[\s\-=+|:_]*[-=_]{3,}[\s\-=+|:_]*$")
_PADDED_KV = re.compile(r"^\s*\S.*?\S\s{2,}:\s")
_KV = re.compile(r"^\s*[\w\[\].()/#%+'\- ]{1,60}?:(\s+\S|\s*$)")
_COLUMNS = re.compile(r"\S\s{2,}\S.*\S\s{2,}\S")


def shape(line: str) -> str | None:
    """The layout class of one line (None for a blank line)."""
    text = line.rstrip("\r\n")
    if not text.strip():
        return None
    stripped = text.strip()
    if stripped.startswith("<"):
        return "xml"
    if stripped.startswith("{") or (stripped.startswith("[") and stripped.endswith((",", "{"))):
        return "json"
    if _RULE.match(text):
        return "rule"
    if _PADDED_KV.match(text):
        return "padded key : value"
    if _KV.match(text):
        return "key: value"
    if _COLUMNS.search(text):
        return "columns"
    return "text"


def shapes(text: str) -> set[str]:
    return {s for s in (shape(line) for line in text.splitlines()) if s is not None}


@pytest.fixture(scope="module")
def sims() -> dict[str, Sim]:
    built = {}
    for name in ("optic-degrading", "slow-node", "pfc-storm"):
        built[name] = build_sim(fresh_state(demo_topology(), find_scenario(name),
                                            [shipped_templates()]))
    built["infiniband"] = build_sim(fresh_state(
        case_topology("h100-64gpu-ib", [shipped_templates()]), find_scenario("ib-bad-cable"),
        [shipped_templates()]))
    return built


def _sim_for(row: Row, sims: dict[str, Sim]) -> Sim:
    """Where each command has something to show: hot GPUs on slow-node's node004, pause on
    pfc-storm's leaf-g00-r4, FEC and light on optic-degrading."""
    if row.fabric == "infiniband":
        return sims["infiniband"]
    cells = repr([c.cell_contents for c in row.run.__closure__ or ()])
    if "node004" in cells:
        return sims["slow-node"]
    return sims["pfc-storm" if "leaf-g00-r4" in cells else "optic-degrading"]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_simulated_output_conforms_to_its_real_capture(row: Row, sims: dict[str, Sim]) -> None:
    real = (FIXTURES / row.sample).read_text()
    assert row.sample.split("/")[1].split("-")[0] != "synthetic", "a real capture, please"
    simulated = row.run(_sim_for(row, sims))
    # the same parser kind is chosen for both
    assert registry.detect(simulated)[0][0] == row.kind, registry.detect(simulated)[:3]
    real_guess = registry.detect(real)
    assert real_guess and real_guess[0][0] == row.kind, real_guess[:3]
    # the real capture's fields are in the simulated output
    parser = registry.get(row.kind).module
    want, have = fields(parser.parse(real)), fields(parser.parse(simulated))
    lacking = sorted(want - have - set(row.missing))
    assert not lacking, f"{row.name}: the simulation lacks {lacking}"
    stale = sorted(set(row.missing) & have)
    assert not stale, f"{row.name}: listed as missing but printed: {stale}"
    # the simulation prints no line shape the real device does not
    extra = sorted(shapes(simulated) - shapes(real) - set(row.shapes))
    assert not extra, f"{row.name}: shapes the real capture lacks: {extra}"


def test_every_simulated_command_has_a_real_capture_or_a_reason() -> None:
    covered = {r.name for r in ROWS} | set(UNSAMPLED)
    node_programs = {p for p in _COMMANDS if not p.startswith("ib_") or p == "ib_write_bw"}
    assert node_programs == set(SIMULATED_NODE_PROGRAMS), \
        sorted(node_programs ^ set(SIMULATED_NODE_PROGRAMS))
    listed = [entry for entries in SIMULATED_NODE_PROGRAMS.values() for entry in entries]
    listed += [*SIMULATED_SWITCH_COMMANDS, *PERFTEST_FAMILY, *NCCL_TESTS]
    assert sorted(set(listed)) == sorted(covered), sorted(set(listed) ^ covered)
    unsampled = sorted(set(listed) - {r.name for r in ROWS})
    assert unsampled == sorted(UNSAMPLED)
    assert all(reason.strip() for reason in UNSAMPLED.values())
