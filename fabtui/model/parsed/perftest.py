"""linux-rdma perftest (`ib_write_bw`, `ib_read_lat`, `raw_ethernet_bw`, ...): one run's result.

A capture may hold more than one result block: both sides of a loopback run
(`run_perftest_loopback`, superbench), the server's and the client's streams interleaved line by
line, or several runs pasted one after another. Every block is kept in `results` (in the order
its test banner appears); the top-level fields repeat the main block, which is the first client
block that printed result rows, else the first block with rows, else the first block.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class PerftestAddress(BaseModel):
    """One `local address:` / `remote address:` line (one per QP), identifiers as printed."""

    model_config = ConfigDict(extra="forbid")

    lid: str | None = None
    """LID as printed, e.g. `0x6e` (`0000` on RoCE, where LIDs are unused)."""
    qpn: str | None = None
    """Queue pair number as printed, e.g. `0x0027`."""
    psn: str | None = None
    """Packet sequence number as printed."""
    rkey: str | None = None
    """Remote key (RDMA tests only)."""
    vaddr: str | None = None
    """Buffer virtual address (RDMA tests only)."""
    out: str | None = None
    """Outstanding reads/atomics (`OUT 0x10`, read and atomic tests)."""
    gid: str | None = None
    """The `GID:` line printed under the address on RoCE (or with `-x`), as printed."""


class PerftestRow(BaseModel):
    """One result row. Bandwidth tests fill `bw_*`/`msg_rate`, latency tests fill `t_*`.

    A column the tool version did not print is null.
    """

    model_config = ConfigDict(extra="forbid")

    bytes: int
    """Message size in bytes (`#bytes`)."""
    iterations: int | None = None
    """Iterations measured (`#iterations`)."""
    bw_peak: float | None = None
    """Peak bandwidth in the result's `unit`. A server prints 0.00 here (it cannot measure the
    peak), as does a run with `-N`/`-F`; kept as printed."""
    bw_avg: float | None = None
    """Average bandwidth in the result's `unit`: the number to judge a link by."""
    msg_rate: float | None = None
    """Message rate in Mpps (`MsgRate[Mpps]`)."""
    t_min_usec: float | None = None
    """Minimum latency (`t_min`), in the result's `unit` (usec; cycles with `-C`)."""
    t_max_usec: float | None = None
    """Maximum latency (`t_max`)."""
    t_typical_usec: float | None = None
    """Typical (median) latency (`t_typical`)."""
    t_avg_usec: float | None = None
    """Average latency (`t_avg`; the only latency column of duration mode `-D`)."""
    t_stdev_usec: float | None = None
    """Standard deviation of the latency (`t_stdev`, perftest 4.x+)."""
    p99_usec: float | None = None
    """99th percentile latency (`99% percentile`, perftest 4.x+)."""
    p99_9_usec: float | None = None
    """99.9th percentile latency (`99.9% percentile`, perftest 4.x+)."""
    tps_avg: float | None = None
    """Transactions per second (`tps average`, latency duration mode)."""
    sl: int | None = None
    """Service level (`#sl` column of QoS runs)."""
    bw_port1: float | None = None
    """Bandwidth of port 1 in `unit` (`--report-per-port`)."""
    msg_rate_port1: float | None = None
    """Message rate of port 1 in Mpps (`--report-per-port`)."""
    bw_port2: float | None = None
    """Bandwidth of port 2 in `unit` (`--report-per-port`)."""
    msg_rate_port2: float | None = None
    """Message rate of port 2 in Mpps (`--report-per-port`)."""
    cpu_util_pct: float | None = None
    """CPU utilisation in percent (`CPU_Util[%]`, `--cpu_util`)."""


class PerftestFields(BaseModel):
    """The fields of one perftest result block (shared by the top level and `results[]`)."""

    model_config = ConfigDict(extra="forbid")

    test: str | None = None
    """The verb from the banner (`RDMA_Write BW Test` -> `RDMA_Write`): `Send`, `RDMA_Write`,
    `RDMA_Read`, `Atomic`; null when the banner is missing."""
    test_type: Literal["bw", "lat"] | None = None
    """`bw` or `lat`, from the banner or, failing that, from the result columns."""
    tool: str | None = None
    """The program, when a command line names it (`ib_write_bw`, `raw_ethernet_bw`, ...)."""
    command: str | None = None
    """The command line printed before the block (shell prompt removed), if any."""
    side: Literal["client", "server"] | None = None
    """`server` when the block follows the `Waiting for client to connect...` banner, when the
    command line has `--server`/`-Z` (raw_ethernet_*), or when it prints `RX depth` without
    `TX depth`; otherwise `client`."""
    bidirectional: bool = False
    """True for `... Bidirectional BW Test` (`-b`): bandwidths are the sum of both directions."""
    atomic_type: str | None = None
    """`FETCH_AND_ADD` or `CMP_AND_SWAP` from an atomic test banner."""
    unit: str | None = None
    """Unit of `bw_peak`/`bw_avg` as printed in the column header (`MB/sec`, `MiB/sec`,
    `Gb/sec`) or of the latency columns (`usec`, or `cycles` with `-C`). A latency block without
    a result table gets `usec` (`cycles` when the command line has `-C`); a bandwidth block
    without one gets null."""
    link_type: str | None = None
    """`Link type`: `IB` or `Ethernet` (RoCE)."""
    mtu: int | None = None
    """Active MTU in bytes (`Mtu : 4096[B]`)."""
    device: str | None = None
    """RDMA device (`Device : mlx5_0`)."""
    num_qps: int | None = None
    """Number of QPs (`Number of qps`)."""
    transport_type: str | None = None
    """`Transport type`, e.g. `IB`."""
    connection_type: str | None = None
    """`Connection type`: `RC`, `UC`, `UD`, `XRC`, `DC`, `RawEth`."""
    dual_port: bool | None = None
    """`Dual-port` ON/OFF."""
    using_srq: bool | None = None
    """`Using SRQ` ON/OFF."""
    pcie_relax_order: bool | None = None
    """`PCIe relax order` ON/OFF."""
    ibv_wr_api: bool | None = None
    """`ibv_wr* API` ON/OFF (perftest 4.5+)."""
    tx_depth: int | None = None
    """`TX depth` (printed by the sending side)."""
    rx_depth: int | None = None
    """`RX depth` (printed by the receiving side of Send tests)."""
    cq_moderation: int | None = None
    """`CQ Moderation`."""
    max_inline_data: int | None = None
    """`Max inline data` in bytes."""
    outstand_reads: int | None = None
    """`Outstand reads` (read and atomic tests)."""
    rdma_cm_qps: bool | None = None
    """`rdma_cm QPs` ON/OFF."""
    data_ex_method: str | None = None
    """`Data ex. method`: `Ethernet` (TCP socket) or `rdma_cm`."""
    gid_index: int | None = None
    """`GID index` (RoCE, or `-x`)."""
    header: dict[str, str] = {}
    """Every `name : value` pair of the block header as printed (including ones without a field
    above, e.g. `Lock-free`, `CQE Poll Batch`, `TOS`)."""
    local_addresses: list[PerftestAddress] = []
    """The `local address:` lines, one per QP."""
    remote_addresses: list[PerftestAddress] = []
    """The `remote address:` lines, one per QP."""
    gpudirect: bool = False
    """True when the block shows GPU memory in use (`--use_cuda`/`--use_rocm`/... on the command
    line, or `initializing CUDA` / `cuMemAlloc` / `Using ROCm Device` lines)."""
    gpu_api: str | None = None
    """`CUDA`, `ROCm`, ... when `gpudirect`."""
    gpu_name: str | None = None
    """The GPU the tool picked, as printed (`device name = [NVIDIA H100 80GB HBM3]`)."""
    rows: list[PerftestRow] = []
    """Result rows in printed order; empty when the block has no result table (a server still
    waiting, a run that failed)."""


class PerftestResult(PerftestFields):
    """One result block of the capture (one side of one run)."""


class Perftest(PerftestFields, ParsedOutput):
    """A perftest capture: the main result at the top level, every block in `results`."""

    kind: Literal["perftest"] = "perftest"
    """Always `perftest`."""
    results: list[PerftestResult] = []
    """Every result block in the order its banner appears (the main one included)."""
    main_index: int | None = None
    """Index in `results` of the block the top-level fields describe."""
    errors: list[str] = []
    """Failure lines the tool printed, e.g. `Couldn't connect to 10.0.0.2:18515`,
    `Completion with error at client`, `Failed status 12: wr_id 0 syndrom 0x81`."""
    notices: list[str] = []
    """Warnings the tool printed, e.g. `Conflicting CPU frequency values detected: ...`,
    `WARNING: BW peak won't be measured in this run.`, ConnectX-3 API fallbacks."""
