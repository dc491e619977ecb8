"""The parser catalog without the parsers: kind, module, description and a detection signature.

`fabtui parse --as KIND` imports one parser and `fabtui parse FILE` only those whose signature
the input carries, instead of every parser module and its pydantic models (most of the
command's start-up). A signature is a necessary condition, never a verdict: it matches
wherever the parser's own `detect` could score above zero, so skipping the parsers it rules
out changes no detection result. Each one is the union of the literals or patterns that every
scoring branch of that `detect` requires, with anchors dropped and single spaces widened to
`\\s` where the detector cleans or expands tabs.

Kept honest by tests/test_parser_signatures.py: the table lists exactly the discovered parser
modules with their own `KIND` and `DESCRIPTION`, and on every fixture and fuzzed input a
parser whose signature does not match scores zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabtui.parsers.text import normalize

HEAD = 65536
"""Characters from the start every detector looks at (none looks further)."""


@dataclass(frozen=True)
class Signature:
    """Where a parser lives and what its input must carry."""

    kind: str
    module: str
    """Module name inside `fabtui.parsers`."""
    description: str
    pattern: re.Pattern[str] | None
    """Searched in the head (and tail) of the input; None: always ask the parser itself."""
    tail: int = 0
    """The detector also reads this many characters from the end (`head + "\\n" + tail`)."""
    head: int = HEAD

    def may_be(self, text: str, samples: dict[tuple[int, int], tuple[str, ...]]) -> bool:
        """False only when `text` cannot be this kind (its detector would score zero).

        `samples` caches the windows of one input across signatures.
        """
        if self.pattern is None:
            return True
        key = (self.head, self.tail)
        if key not in samples:
            samples[key] = _windows(text, self.head, self.tail)
        return any(self.pattern.search(sample) for sample in samples[key])


def _windows(text: str, head: int, tail: int) -> tuple[str, ...]:
    """The detector's window as given and normalised: raw-text detectors and cleaning ones
    then both see a superset of what they match."""
    sample = text[:head] + ("\n" + text[-tail:] if tail and len(text) > head else "")
    cleaned = normalize(sample)
    return (sample,) if cleaned == sample else (sample, cleaned)


def _sig(kind: str, module: str, description: str, pattern: str | None,
         **window: int) -> Signature:
    return Signature(kind, module, description,
                     re.compile(pattern) if pattern is not None else None, **window)


SIGNATURES: tuple[Signature, ...] = (
    _sig("buffer-profiles", "buffer_profiles",
         "SONiC `mmuconfig -l`: buffer pools and profiles (lossless headroom xon/xoff/size)",
         r"(?:Profile|Pool)(?: for namespace \S+)?:"),
    _sig("dcgmi-diag", "dcgmi_diag",
         "dcgmi diag -r 1|2|3|4: DCGM diagnostic results per test and per GPU",
         r"\|\s*Diagnostic\s+\|\s*Result\s+\||[|+]-{3,}\s+(?:Deployment|Metadata|Hardware|"
         r"Integration|Stress)\s+-|Successfully ran diagnostic|dcgmi\s+diag|"
         r"DCGM (?:GPU )?Diagnostic|\|\s*(?:Pass|Fail|Skip|Warn) - (?:All|GPU)"),
    _sig("eos-running-config", "eos_running_config",
         "Arista EOS show running-config: commands by section, nested lines with parents",
         r"(?m)^! (?:Command: show running-config|device: )"),
    _sig("ethtool-info", "ethtool_info",
         "ethtool -i NETDEV: driver, driver version (OFED/DOCA or kernel), firmware, PSID",
         r"(?m)^driver: \S"),
    _sig("ethtool-stats", "ethtool_stats", "ethtool -S <netdev>: NIC statistics counters",
         r"NIC statistics:|(?:rx|tx)_\w*(?:packets|bytes)"),
    _sig("fec-stats", "fec_stats",
         "SONiC `show interfaces counters fec-stats` / `fec-histogram`: FEC corrected, "
         "uncorrectable, symbol errors, pre/post-FEC BER, FLR per port",
         r"FEC_CORR|Symbol Errors Per Codeword\s+Codewords|BIN0\s+BIN1"),
    _sig("file-values", "file_values",
         "grep -H . FILE...: sysfs values and KEY=VALUE files, each line with its file",
         r"(?m)^/[^:\s]*:"),
    _sig("flight-recorder", "flight_recorder",
         "PyTorch Flight Recorder: torchfrtrace/fr_trace report, dump (JSON or unpickled), "
         "per-entry state listing",
         r"Not all ranks joining collective|Collective sequence number: \d+ has errors|"
         r"Input/output mismatch in the collective|"
         r"[\"'](?:pg_config|pg_status|entries|profiling_name)[\"']\s*:|"
         r"(?:scheduled|started|completed)\s+(?:nccl|gloo|xccl|ucc|mpi|custom)\S*:"),
    _sig("ibdev2netdev", "ibdev2netdev",
         "ibdev2netdev [-v]: RDMA device port -> netdev, link state", r"==>"),
    _sig("ibdiagnet", "ibdiagnet",
         "ibdiagnet: InfiniBand fabric sweep (stages, fabric summary, port-counter errors)",
         r'Running version:\s*"IBDIAGNET|-I- Stage\s+Warnings\s+Errors'),
    _sig("ibnetdiscover", "ibnetdiscover",
         "ibnetdiscover [-p|-l]: InfiniBand fabric links and nodes, degraded links",
         r"(?:CA|SW|RT)\s+\d+\s+\d+\s+\S|(?:Switch|Ca|Rt)\s+\d+\s+\"|"
         r"(?:Switch|Ca|Router)\s*:\s*\S+\s+ports|# Topology file:"),
    _sig("ibstat", "ibstat", "ibstat / ibstatus: InfiniBand CA and port state, rate, LIDs, GUIDs",
         r"(?i:Infiniband device)|(?:CA|Switch):?\s+'"),
    _sig("ibswinfo", "ibswinfo",
         "ibswinfo.sh (unmanaged Mellanox IB switch): part/serial, firmware, PSUs, "
         "temperatures, fan speeds and status",
         r"part number\s+\||(?:PSU\d+ status|fan#\d+ \(rpm\)|temperature \(C\))\s+\||"
         r"(?:psu\d+\.(?:status|power \(W\))|cur\.temp \(C\)|fan#\d+\.speed \(rpm\)|"
         r"node_desription)\s+:"),
    _sig("ibv_devinfo", "ibv_devinfo",
         "ibv_devinfo [-v] [-d dev]: verbs devices, firmware, port state, MTU, link layer",
         r"(?i:HCAs?\s+found:)|hca_id:"),
    # Scores a line with a kernel timestamp (uptime, a dmesg -T/-H, syslog, fabric manager or
    # ISO wall clock, a syslog level, `kernel: `) or an Xid.
    _sig("kernel-log", "kernel_log",
         "kernel log (dmesg, dmesg -T, journalctl -k, syslog): Xid/SXid, link flaps, bond "
         "members, RDMA port state, PCIe AER/downtraining, mlx5 errors",
         r"\d\.\d+\]|(?:^|[\s:>])<\d+>|kernel: |Xid \(|"
         r"(?:kern|user|mail|daemon|auth|syslog|lpr|news|local\d)\s*:\s*(?:emerg|alert|crit|err|warn|notice|info|debug)\s*:|"
         r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) *\d+ (?:\d{4} )?\d\d:\d\d|"
         r"\d{4}-\d\d-\d\dT\d\d:\d\d"),
    # The detector expands tabs, so a space in its patterns may be a tab here.
    _sig("lldp-neighbors", "lldp_neighbors",
         "LLDP neighbors: SONiC show lldp table|neighbors, EOS/NX-OS show lldp neighbors "
         "[detail], lldpcli show neighbors / lldpctl [-f keyvalue], NVUE nv show interface lldp",
         r"(?i:lldp)|LocalPort|Neighbor\s+Device|Hold-time|Remote\s*(?:Host|IP)|Interface:|"
         r"(?i:Local\s+Port\s+id)|Last\s+table\s+change|Number\s+of\s+table|nv\s+show|"
         r"Local\s+chassis|Global\s+configuration"),
    _sig("mlnx-qos", "mlnx_qos",
         "mlnx_qos -i NETDEV (mlnx-tools): DSCP/PCP trust, PFC per priority, TC groups",
         r"Priority trust state:"),
    _sig("mlxlink", "mlxlink",
         "mlxlink -d <dev> [-p port] [-m] [-c]: port state, FEC, BER counters, module DOM",
         r"Operational Info|(?:State|Speed|FEC|Status Opcode|Recommendation|BER|"
         r"\(Enabled\))\s+:"),
    _sig("nccl-inspector", "nccl_inspector",
         "NCCL Inspector profiler plugin output: per-communicator collective busbw "
         "(JSON log or Prometheus textfile)",
         r'"(?:coll_perf|p2p_perf|inspector_output_format_version)"|'
         r"nccl_(?:bus_bandwidth_gbs|collective_exec_time_microseconds|"
         r"p2p_bus_bandwidth_gbs|p2p_exec_time_microseconds)\{"),
    _sig("nccl-log", "nccl_log",
         "NCCL_DEBUG=INFO/WARN logs and PyTorch ProcessGroupNCCL watchdog, desync and torchrun "
         "failure messages",
         r"NCCL INFO|NCCL WARN|Watchdog caught collective operation timeout|"
         r"failure detected by watchdog|WorkNCCL\(|ProcessGroupNCCL|NCCL error in:|"
         r"didn't join collective #|didn't finish collective #|nccl(?:SystemError|"
         r"InternalError|RemoteError|InvalidUsage|InvalidArgument|UnhandledCudaError)|"
         r"third_party/gloo|\[c10d\]|NCCL version|TCPStore|DistStoreError|DistNetworkError|"
         r"Gloo connectFullMesh|ChildFailedError|DistBackendError",
         tail=32768),
    _sig("nccl-tests", "nccl_tests",
         "nccl-tests *_perf output (all_reduce_perf, all_gather_perf, alltoall_perf, ...)",
         r"# nccl-tests version|# Collective test starting|#\s*nThread\s+\d|"
         r"#\s+size\s+count\s+type|Out of bounds values|Avg bus bandwidth|"
         r"Test (?:NCCL |CUDA )?failure|algbw",
         head=50000, tail=20000),
    _sig("nccl-triage", "nccl_triage",
         "fabtui triage nccl --json: hang triage report (verdict, suspects, collective)",
         r"\"similar_cases\""),
    _sig("nvidia-smi", "nvidia_smi",
         "nvidia-smi (default table): per-GPU status blocks and processes",
         r"NVIDIA-SMI\s+\d|Persistence-M|"
         r"\|\s+\d+\s+.*\|\s+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d"),
    _sig("nvidia-smi-q", "nvidia_smi_q",
         "nvidia-smi -q (text) / nvidia-smi -q -x (XML): per-GPU health, ECC, PCIe, clocks",
         r"NVSMI LOG|<nvidia_smi_log|(?:Product Name|GPU UUID|Bus Id|Persistence Mode|"
         r"Performance State)\s+:|GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d"),
    _sig("nvidia-smi-topo", "nvidia_smi_topo",
         "nvidia-smi topo -m / --matrix / -p2p r|w|n|a|p: GPU/NIC connection matrix",
         r"GPU0[ \t]|X\s+=\s+Self|nvidia-smi topo|NIC Legend:"),
    _sig("nvlink-errors", "nvlink_errors",
         "nvidia-smi nvlink -e: NVLink replay, recovery and CRC error counters per link",
         r"Link\s+\d+:"),
    _sig("opensm-log", "opensm_log",
         "OpenSM log: SM state (master/standby), heavy sweeps, SUBNET UP, traps, port states",
         r"\] 0x[0-9A-Fa-f]{2} -> "),
    _sig("perfquery", "perfquery",
         "perfquery [-x|-E|-D] <lid> <port>: InfiniBand port counters (PMA)",
         r"(?i:counters:\s*Lid)|(?:PortXmitData|PortRcvData|SymbolErrorCounter|PortXmitWait|"
         r"LinkDownedCounter|PortRcvErrors|PortLocalPhysicalErrors|PortXmitDiscards|"
         r"PortSelect)\s*:\."),
    _sig("perftest", "perftest",
         "linux-rdma perftest ib_{write,read,send,atomic}_{bw,lat} / raw_ethernet_* output "
         "(client or server side)",
         r"(?:BW|Latency)(?: [A-Za-z]+)* Test|#bytes\s+(?:#sl\s+)?#iterations|"
         r"BW (?:peak|average)\[|t_typical\[|t_avg\[|Number of qps|Connection type|"
         r"Data ex\. method|Transport type|Max inline data|Outstand reads|local address:|"
         r"(?i:Waiting for client to connect|Couldn't connect to \S+:\d|"
         r"Unable to init the socket connection|Failed to (?:exchange data between server and "
         r"clients|create QP|modify QP)|Couldn't get (?:device|context))"),
    _sig("pfc-counters", "pfc_counters",
         "SONiC `show pfc counters [--history]` (pfcstat): PFC0-7 frames per port, Rx/Tx",
         r"Port (?:Rx|Tx)\s+PFC0\s+PFC1|Port\s+Priority\s+RX Pause Transitions"),
    _sig("pfcwd", "pfcwd",
         "SONiC `show pfcwd stats` / `show pfcwd config`: PFC watchdog storms per queue",
         r"QUEUE\s+STATUS\s+STORM DETECTED/RESTORED|PORT\s+ACTION\s+DETECTION TIME\s+"
         r"RESTORATION TIME"),
    _sig("queue-counters", "queue_counters",
         "SONiC `show queue counters` (queuestat): packets/bytes/drops per port and queue, "
         "and `show queue wredcounters` (WRED drops, ECN-marked packets)",
         r"Port\s+(?:TxQ|Voq)\s+(?:Counter/pkts\s+Counter/bytes|WredDrp/pkts|EcnMarked/pkts)"
         r"|\"(?:totalpacket|ecnmarkedpacket|wreddroppacket)\"\s*:"),
    _sig("queue-watermark", "queue_watermark",
         "SONiC `show queue watermark` / `show priority-group watermark`: peak buffer "
         "occupancy per queue or priority group (bytes)",
         r"(?:Egress shared pool occupancy per|Ingress (?:shared pool occupancy|headroom) per PG)"),
    _sig("rdma-hw-counters", "rdma_hw_counters",
         "show_counters <dev> / sysfs hw_counters dump: RDMA port counters (CNP, ECN, ...)",
         r"(?i:Port\s+\d+\s+hw\s+counters)|/sys/class/infiniband/[^/\s]+/ports/|"
         r"(?:np_cnp_sent|np_ecn_marked_roce_packets|rp_cnp_handled|rp_cnp_ignored|"
         r"out_of_sequence|packet_seq_err|local_ack_timeout_err|implied_nak_seq_err|"
         r"duplicate_request|rnr_nak_retry_err|req_cqe_error|resp_cqe_error|roce_adp_retrans|"
         r"rx_write_requests|resp_cqe_flush_error)\s*:\s*\d"),
    _sig("rdma-statistic", "rdma_statistic",
         "rdma statistic show (iproute2): RDMA hw counters per link, plain, -p or -j",
         r"link\s+\S+/\d|\"ifname\""),
    _sig("sacct", "sacct", "sacct --parsable2 (-P): jobs and steps, their state and node list",
         r"(?i:jobid)|COMPLETED|RUNNING|PENDING|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|PREEMPTED|"
         r"OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|REQUEUED|RESIZING|REVOKED|SUSPENDED|COMPLETING"),
    _sig("scontrol-job", "scontrol_job",
         "scontrol show job [-d]: each job's state, nodes, tasks and per-node CPUs / GRES",
         r"JobId=\d"),
    _sig("show-gids", "show_gids",
         "show_gids (mlnx-tools): RoCE/IB GID table, index, IPv4, RoCE version, netdev",
         r"(?i:DEV\s+PORT\s+INDEX\s+GID)|n_gids_found\s*=\s*\d"),
    _sig("slurm-topology", "slurm_topology",
         "scontrol show topology / topology.conf: Slurm's tree of switches and nodes",
         r"(?i:SwitchName\s*=)"),
    _sig("sonic-config-db", "sonic_config_db",
         "SONiC CONFIG_DB JSON (show runningconfiguration all, config_db.json): tables",
         r'"[A-Z][A-Z0-9_]+"\s*:\s*\{'),
    _sig("squeue-json", "squeue_json",
         "squeue --json (Slurm 21.08-24.x): jobs, states, node lists, per-node allocation",
         r'"jobs"'),
    _sig("switch-counters", "switch_counters",
         "switch interface counters: SONiC `show interfaces counters` (all forms), EOS `show "
         "interfaces [counters [errors|discards]]`, NX-OS `show interface [counters [errors]]`, "
         "NVUE `nv show interface X counters`, Onyx `show interfaces ethernet` (text or "
         "json-print)",
         r"RX_OK|RX_ERR|TRIM_PKTS|RxOk|RxErr|Packets (?:Received|Transmitted)|"
         r"Operational state|nv\s+show|carrier-transitions|"
         r"(?:Ethernet|Eth|port-channel|mgmt|Vlan|loopback)\S* is (?:up|down)|"
         r"\"(?:in-pkts|out-pkts|netstat)\"|Counter\s+Receive\s+Transmit|line protocol is|"
         r"Port\s+(?:InOctets|OutOctets|InUcastPkts|InMcastPkts|OutUcastPkts|FCS|Align|"
         r"Single-Col|Giants|InDiscards|OutDiscards)"),
    _sig("switch-l1", "switch_l1",
         "Cumulus Linux `l1-show <swp>`: module, link, FEC, optical power, SerDes eyes",
         r"Module Info|Operational State|Port Hardware State"),
    _sig("switch-version", "switch_version",
         "show version (SONiC, Arista EOS): network OS, its version, platform, model",
         r"SONiC Software Version:|Software image version:"),
    _sig("training-log", "training_log",
         "training job log (Megatron-LM, TorchTitan, DeepSpeed, Hugging Face Trainer, "
         "tqdm): step lines and step times",
         r"iteration\s+\d+\s*/\s*\d+\s*\||step:\s*\d+\s+loss:|\[Rank \d+\] step=\d+, "
         r"skipped=|SamplesPerSec=|rank=\d+ time \(ms\) \|\s*forward:|"
         r"\{'(?:loss|train_runtime)':|\d+/\d+ \[\d+(?::\d+){1,2}<[\d:?]+,\s*[\d.]+"
         r"(?:s/it|it/s)"),
    _sig("transceiver-dom", "transceiver_dom",
         "transceiver DOM (optical power, bias, temperature, thresholds): SONiC `show "
         "interfaces transceiver eeprom --dom`, EOS `show interfaces transceiver [detail]`, "
         "NX-OS `show interface transceiver [details]`",
         r"SFP |transceiver is |\(Celsius\)\s+\(Volts\)|High Alarm\s+High Warn|"
         r"mA: milliamperes|dBm: decibels"),
)
"""Every parser, in module-name order: the order discovery always had, which detection keeps
for parsers that score the same."""
