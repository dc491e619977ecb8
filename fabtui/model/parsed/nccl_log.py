"""NCCL_DEBUG logs, PyTorch ProcessGroupNCCL and torchrun failure messages: events, init facts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.parsed import ParsedOutput

EventType = Literal[
    "watchdog_timeout", "heartbeat_timeout", "pg_status", "desync",
    "ib_completion_error", "ib_async_event",
    "connect_failed", "socket_connect_refused", "connect_timeout", "connection_closed",
    "store_error", "bootstrap_error",
    "plugin_not_found", "net_plugin_error",
    "unhandled_system_error", "nccl_error", "cuda_error",
    "dist_backend_error", "process_terminated", "child_failed",
    "nccl_warn", "init_complete",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NcclLogEvent(_Strict):
    """One notable line (or a few merged lines) of the log; fields that do not apply are null."""

    type: EventType
    """`watchdog_timeout` (PyTorch watchdog: old `WorkNCCL(SeqNum=..)` and newer `failure
    detected by watchdog at work sequence id` forms; restatements of the same rank and sequence
    number are merged into the first), `heartbeat_timeout` (watchdog itself stuck),
    `pg_status` (a rank's `Last enqueued / last completed NCCL work` when it received the
    dump signal: a rank whose last enqueued work is below the timed-out `seq` is lagging),
    `desync` (desync report: a rank that did not join or finish collective `seq`),
    `ib_completion_error` (NET/IB work completion with an error status), `ib_async_event`
    (NET/IB async event: port error, fatal QP event), `connect_failed` / `socket_connect_refused`
    (socket connect to `peer` failed / was refused: NCCL `Connect to`, c10d `The client socket
    has failed to connect to [host]:port (errno: N - ...)`, gloo `connectFullMesh failed`),
    `connect_timeout` (c10d / TCPStore connect timed out), `connection_closed` (peer closed or
    reset the connection: NCCL `Connection closed by remote peer`, gloo `Connection closed by
    peer [addr]:port`, `Read error [addr]:port: Connection reset by peer`, broken pipe),
    `store_error` (c10d TCPStore / DistStoreError: rendezvous store unreachable or timed out),
    `bootstrap_error` (bootstrap / no socket interface), `plugin_not_found`
    (NET plugin not found, or the requested network not found), `net_plugin_error` (other NET
    plugin failures), `unhandled_system_error` / `nccl_error` / `cuda_error` (PyTorch `NCCL error
    in:` lines by reason, CUDA failures), `dist_backend_error` (terminate or Python exception
    with c10::DistBackendError), `process_terminated` (other terminate / `Terminating the
    process`), `child_failed` (torchrun ChildFailedError entries and `failed (exitcode: N)`),
    `nccl_warn` (any other NCCL WARN line), `init_complete` (communicator Init COMPLETE)."""
    rank: int | None
    """Global rank the event is about, only where the log states it: `[Rank N]` / `[rankN]:`
    (PyTorch, also as a torchrun prefix of NCCL lines), the desync report, torchrun's `rank :`,
    `communicator was aborted on rank N`, or, for NCCL lines, the rank the same process (host
    and pid) reported at communicator init (`rank R nranks N`). Never the bracketed number of
    the NCCL line prefix: that is the CUDA device (`device`). See `rank_source`."""
    host: str | None
    """Host name from the NCCL line prefix `host:pid:tid [dev]` or torchrun's `host :`."""
    seq: int | None
    """Collective sequence number (SeqNum / work sequence id / `#N` of the desync report)."""
    op: str | None
    """Collective operation as printed (ALLREDUCE, _ALLGATHER_BASE, ...)."""
    timeout_ms: int | None
    """Configured timeout in milliseconds (`Timeout(ms)=`)."""
    peer: str | None
    """Remote address (IP or host name, without the `<port>` / `]:port`) for IB completion
    errors and socket, gloo and c10d connection failures."""
    status: int | None
    """Numeric status: the ibv_wc_status of an IB completion error (12 = retry exceeded),
    the exit code of a failed child, the errno of a socket failure (111 = refused)."""
    line: int
    """1-based line number of the (first) line of the event in the input."""
    message: str
    """The message text, without launcher, NCCL or c10 log prefixes (at most 500 characters)."""
    rank_source: Literal["pytorch", "desync", "torchrun", "init", "text"] | None = None
    """Where `rank` came from: `pytorch` (`[Rank N]`, `[rankN]:`), `desync`, `torchrun`,
    `init` (the process's communicator init line), `text` (`... on rank N`)."""
    pid: int | None = None
    """Process id from the NCCL line prefix or torchrun."""
    device: int | None = None
    """CUDA device index: the bracketed number of the NCCL line prefix, or `cudaDev` at init."""
    source: str | None = None
    """Source location printed with a NCCL WARN (`transport/net_ib.cc:1296`)."""
    pg: str | None = None
    """PyTorch process group as printed in `[PG ... Rank N]`, e.g. `0 (default_pg)`."""
    last_enqueued: int | None = None
    """Watchdog: last enqueued work sequence number of the process group."""
    last_completed: int | None = None
    """Watchdog: last completed work sequence number; for a desync, the last collective the
    lagging rank finished."""
    ran_for_ms: int | None = None
    """Watchdog: how long the timed-out collective ran, in milliseconds."""
    numel_in: int | None = None
    """Watchdog: NumelIn of the timed-out work."""
    numel_out: int | None = None
    """Watchdog: NumelOut of the timed-out work."""
    peer_port: int | None = None
    """Port of `peer` (`<port>` suffix), when printed."""
    status_name: str | None = None
    """Name of `status` for IB completions (IBV_WC_RETRY_EXC_ERR, ...), printed or looked up."""
    status_meaning: str | None = None
    """What `status` means, in words: the verbs description of an IB completion status
    (12: `transport retry counter exceeded`, 5: `Work Request Flushed Error`) or the errno text
    of a socket failure as printed (`Connection refused`)."""
    peer_rank: int | None = None
    """Remote rank the message names (`Failed to execute operation Connect from rank 9`)."""
    nccl_result: str | None = None
    """NCCL result code of an NCCL failure, printed or told by its reason: ncclSystemError
    (`unhandled system error`), ncclInternalError (`internal error`), ncclRemoteError (`remote
    process exited or there was a network error`), ncclInvalidUsage, ncclInvalidArgument,
    ncclUnhandledCudaError."""
    exception: str | None = None
    """Python / C++ exception class the line raises, as printed (`torch.distributed.
    DistBackendError`, `RuntimeError`, `c10::DistBackendError`, ...)."""
    vendor_err: int | None = None
    """IB completion vendor error as printed (129 = 0x81 accompanies status 12)."""
    opcode: int | None = None
    """IB completion opcode."""
    length: int | None = None
    """IB completion byte length (`len`)."""
    direction: str | None = None
    """IB request type of the failed completion as printed: Recv, Send, Flush, ..."""
    local_gid: str | None = None
    """Local GID printed with the IB completion error (RoCE)."""
    remote_gid: str | None = None
    """Remote GID printed with the IB completion error (RoCE)."""
    hca: str | None = None
    """HCA (RDMA device) named by the event, e.g. `mlx5_1`."""
    nranks: int | None = None
    """Communicator size (init_complete)."""
    local_ranks: int | None = None
    """Ranks of the communicator on this node (init_complete, when printed)."""
    local_rank: int | None = None
    """Local rank (init_complete from `localRank`, child_failed from `local_rank`)."""
    n_nodes: int | None = None
    """Nodes of the communicator (init_complete, when printed)."""
    comm_id: str | None = None
    """Communicator id (`commId`), else the comm pointer, for init_complete."""
    bus_id: str | None = None
    """GPU PCI bus id (`busId`) as printed, for init_complete."""


class NcclLogRank(_Strict):
    """A rank as NCCL reports it at communicator init."""

    rank: int
    """Rank in the communicator."""
    nranks: int
    """Communicator size."""
    host: str | None
    """Host name from the line prefix."""
    pid: int | None
    """Process id from the line prefix."""
    device: int | None
    """CUDA device (`cudaDev`)."""
    bus_id: str | None
    """GPU PCI bus id (`busId`) as printed; null in old versions."""
    comm_id: str | None
    """`commId` (or comm pointer when no commId is printed)."""


class NcclNetDevice(_Strict):
    """One `[index]device:port/LINK` (IB) or `[index]ifname:address<port>` (socket) entry of a
    `NET/<transport> : Using ...` line."""

    transport: str
    """IB, Socket, FastSocket, ... (the name after `NET/`)."""
    index: int
    """NCCL's NIC index (the `N` of `NET/IB/N` in channel lines)."""
    device: str
    """RDMA device (mlx5_0) or network interface (eth0)."""
    port: int | None
    """IB port number; null for socket entries."""
    link_layer: str | None
    """IB or RoCE (and any suffix such as /SHARP kept as printed); null for socket entries."""
    address: str | None = None
    """IP address of a socket entry; null for IB entries."""
    hosts: list[str] = Field(default_factory=list)
    """Hosts that printed this entry (empty when the line has no host prefix)."""


class NcclInterface(_Strict):
    """A socket interface NCCL chose (bootstrap, or the OOB interface of NET/IB)."""

    interface: str
    """Interface name, e.g. `eth0`."""
    address: str
    """Its address as printed (without the `<port>` suffix)."""
    hosts: list[str] = Field(default_factory=list)
    """Hosts that reported it."""


class NcclNetChannelUse(_Strict):
    """Channel connections over one NET device, with or without GPUDirect RDMA."""

    net: str
    """Network name of the channel line (IB, Socket, AWS Libfabric, ...)."""
    nic_index: int
    """NIC index N of `via NET/<net>/N`."""
    gdrdma: bool
    """True when the connection is `.../GDRDMA` (GPUDirect RDMA in use)."""
    connections: int
    """Channel connection lines counted (send and receive)."""
    ranks: list[int] = Field(default_factory=list)
    """Ranks owning these connections (receiver of `[receive]`, sender of `[send]`)."""


class NcclLog(ParsedOutput):
    """What an NCCL / PyTorch distributed log says: failures as events, plus init facts."""

    kind: Literal["nccl-log"] = "nccl-log"
    nccl_version: str | None
    """NCCL version, e.g. `2.27.5+cuda12.9` (first one seen); null if not printed."""
    nccl_versions: list[str] = Field(default_factory=list)
    """Every distinct NCCL version seen (more than one means mismatched nodes)."""
    events: list[NcclLogEvent] = Field(default_factory=list)
    """Notable lines in input order (see `NcclLogEvent.type`)."""
    events_dropped: int = 0
    """Events not kept because the log had more than the cap (10000)."""
    hosts: list[str] = Field(default_factory=list)
    """Hosts seen in NCCL line prefixes of parsed lines and init lines, in order of appearance."""
    ranks: list[NcclLogRank] = Field(default_factory=list)
    """Ranks reported at communicator init (Init START/COMPLETE, `comm ... rank N nRanks`)."""
    nranks: int | None = None
    """Largest communicator size reported."""
    n_nodes: int | None = None
    """Largest `nNodes` reported."""
    local_ranks: int | None = None
    """Largest `localRanks` reported (ranks per node)."""
    mnnvl: bool | None = None
    """Whether the job's largest communicator (most `nRanks`) uses multi-node NVLink: `MNNVL 1`
    on any of its `comm 0x.. rank R nRanks N nNodes .. localRanks .. localRank .. MNNVL M` lines
    (NCCL 2.2x); False when they all print 0 (no NVLink domain across nodes, or
    `NCCL_MNNVL_ENABLE=0`); None when the log does not print it."""
    cuda_driver_version: int | None = None
    """`cudaDriverVersion` as printed (e.g. 12080)."""
    transports: list[NcclNetDevice] = Field(default_factory=list)
    """NET transport devices NCCL uses (one entry per NIC), from `NET/<transport> : Using
    [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE ...` lines: index, device, port, link_layer."""
    relaxed_ordering: bool | None = None
    """True when a NET/IB Using line shows `[RO]` (PCIe relaxed ordering); null otherwise (not
    shown, or a NCCL version that does not print it)."""
    oob_interfaces: list[NcclInterface] = Field(default_factory=list)
    """`OOB` interfaces of NET/IB Using lines."""
    bootstrap_interfaces: list[NcclInterface] = Field(default_factory=list)
    """Interfaces of `Bootstrap : Using ...` lines."""
    networks: list[str] = Field(default_factory=list)
    """Networks NCCL selected (`Using network IB`, `Using network AWS Libfabric`, ...)."""
    net_plugins: list[str] = Field(default_factory=list)
    """NET plugins loaded or initialised (aws-ofi-nccl version, `Loaded net plugin ...`)."""
    ofi_provider: str | None = None
    """Libfabric provider chosen by aws-ofi-nccl (efa, verbs;ofi_rxm, ...)."""
    channel_transports: list[str] = Field(default_factory=list)
    """Transports of channel connections: NET/IB, NET/Socket, P2P/IPC, P2P/CUMEM, SHM, ..."""
    net_connections: int = 0
    """Channel connection lines over a NET transport."""
    net_connections_gdrdma: int = 0
    """Of those, connections using GPUDirect RDMA (`/GDRDMA`)."""
    gpudirect_rdma: bool | None = None
    """True when every NET connection uses GDRDMA, False when any does not (GPUDirect RDMA not
    in effect there); without channel lines, from `use ring PXN n GDR g` and `GPU Direct RDMA
    Enabled/Disabled` lines; null when the log does not tell."""
    gpudirect_rdma_disabled: list[str] = Field(default_factory=list)
    """Distinct `GPU Direct RDMA Disabled ...` messages."""
    net_channel_use: list[NcclNetChannelUse] = Field(default_factory=list)
    """NET channel connections grouped by network, NIC index and GDRDMA."""
    coll_channels: int | None = None
    """`N coll channels` (largest seen); from `Channel xx/N` ring lines in older logs."""
    collnet_channels: int | None = None
    """`N collnet channels` (largest seen)."""
    nvls_channels: int | None = None
    """`N nvls channels` (largest seen)."""
    p2p_channels: int | None = None
    """`N p2p channels` (largest seen)."""
    p2p_channels_per_peer: int | None = None
    """`N p2p channels per peer` (largest seen)."""
    env: dict[str, str] = Field(default_factory=dict)
    """NCCL settings the log reports (`NCCL_IB_GID_INDEX set by environment to 3.`), first
    value per name."""
    collective_calls: dict[str, int] = Field(default_factory=dict)
    """NCCL_DEBUG_SUBSYS=COLL lines counted per operation (`AllReduce: opCount ...`)."""
    info_lines: int = 0
    """NCCL INFO lines."""
    warn_lines: int = 0
    """NCCL WARN lines."""
