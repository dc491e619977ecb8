"""Traffic: the workload's pace, the bytes every link carries, ECN and CNP, and the bus bandwidth
collectives reach.

The workload (a training job at a share of line rate) moves bytes on every rail while it runs
and nothing while it hangs or after it died of a flap longer than its IB retry window; a
straggler slows the whole job. With PXN (NCCL's default) the job's traffic stays on its rails:
leaf uplinks carry background traffic and the NICs cabled to the wrong leaf.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache

from fabtui.model.element import device_of
from fabtui.model.topology import Nic
from fabtui.sim.faults import Fault
from fabtui.sim.pfc import PfcLayer
from fabtui.sim.scenario import FaultKind
from fabtui.topology.expected import (
    NVLINK_SM_EFFICIENCY,
    NodeShape,
    expected_busbw,
    expected_rdma_gbps,
    ib_retry_window_s,
    node_shape,
)
from fabtui.topology.platform import PLATFORMS

BACKGROUND_UPLINK_SHARE = 0.02
"""Share of a leaf uplink's line rate that is not the job's (storage, checkpoints, control)."""

MODELLED_SINGLE_NODE_ALL_REDUCE = {"B200": 835.0, "B300": 835.0, "GB300": 679.6}
"""What the demo's nodes reach in a single-node all_reduce where fabtui has no expected figure
(GB/s): 8 x B200 as publicly reported ("830+", NVIDIA/nccl #1807); B300 and GB300 as their
NVLink5 siblings [inference]. The simulation's own values, never a gate."""
MODELLED_NVLINK_DOMAIN_ALL_REDUCE = 835.0
"""all_reduce busbw inside a multi-node NVLink domain at any size (GB/s): the 72-GPU NVL72 run
(coreweave/nccl-tests PR #43); NVLS through the NVLink switch trays does not fall with fewer
ranks [inference]."""
NVLINK_LOST_SHARE = 0.1
"""A node whose GPU lost its NVLinks moves its intra-node collectives through the CPU: a tenth
of the NVLink figure [inference]."""


class TrafficLayer(PfcLayer):
    """The job's pace, link rates and bytes moved, congestion signals and busbw.

    Reads `scenario` (the workload), `faults`, `graph`, the cabling, the link layer and the PFC
    layer (a storm pauses the traffic through its leaf). Fills the cache `_failure` (when the
    job dies of a long flap) and `_behind`'s (the leaves behind each host)."""

    # workload --------------------------------------------------------------------------------
    def retry_window_s(self) -> float:
        """Seconds a link of the job may be down before its IB QPs give up (completion
        error 12): 4.096 us x 2^NCCL_IB_TIMEOUT x (NCCL_IB_RETRY_CNT + 1), from the job's
        NCCL version and environment (fabtui.topology.expected.ib_retry_window_s)."""
        workload = self.scenario.workload
        return ib_retry_window_s(workload.nccl_version, workload.nccl_env)

    def job_failure(self) -> tuple[float, int] | None:
        """(when, link) the job dies of a host link down longer than its retry window, or
        None: the first outage (a flap, an optic's flap or failed receiver, a shut port) of a
        host link that outlasts `retry_window_s`. A hang's dead cable has its own story."""
        if self._failure is None:
            window = self.retry_window_s()
            found: tuple[float, int] | None = None
            for link in sorted({*self._by_link, *self._shut}):
                if not self._is_host_link(link):
                    continue
                for start, end in self._outages_and_drops(link):
                    if end - start > window and (found is None or start + window < found[0]):
                        found = (start + window, link)
                        break
            self._failure = (found,)
        return self._failure[0]

    def transport_share(self, t: float) -> float:
        """The share of its pace the job keeps despite frames lost on its links (1.0 here; the
        simulation, which knows the FEC, works it out)."""
        return 1.0

    def _outages_and_drops(self, link: int) -> list[tuple[float, float]]:
        """The outages of host link `link`, and the windows in which a PFC watchdog drops its
        lossless traffic (the QPs see no ACK either way)."""
        drops = [window for fault in self.faults if fault.kind is FaultKind.PFC_STORM and
                 fault.link == link and (window := self.watchdog_drops(fault)) is not None]
        return sorted([*self.outages(link), *drops])

    def cut_off(self, t: float) -> set[str]:
        """Hosts a PFC watchdog cuts off at `t` (a collective through them cannot finish)."""
        return {f.host for f in self.faults if f.kind is FaultKind.PFC_STORM and f.host and
                f.link is not None and self.dropping(f.link, t)}

    def job_factor(self, t: float) -> float:
        """How fast the job runs at `t` (0: stalled by a hang, or dead of a long flap; < 1: a
        straggler holds it)."""
        if self.active(FaultKind.NCCL_HANG, t):
            return 0.0
        failure = self.job_failure()
        if failure is not None and t >= failure[0]:
            return 0.0
        factor = self.transport_share(t)
        for fault in self.active(FaultKind.SLOW_NODE, t):
            factor = min(factor, float(fault.spec.params.get("job_factor", 0.6)))
        for fault in self.active(FaultKind.XMIT_WAIT, t):
            factor = min(factor, self._drain_share(fault))
        return factor

    @staticmethod
    def _drain_share(fault: Fault) -> float:
        """The pace a ring keeps with a slow receiver in it (InfiniBand `xmit-wait`): the leaf
        port sending to it waits `share` of the time, so it drains 1 - share of its line rate
        and every step waits for it [inference: a ring all_reduce runs at its slowest link]."""
        return 1.0 - float(fault.spec.params.get("share", 0.35))

    def rate(self, link: int, t: float) -> float:
        """Bytes per second the link carries in each direction at `t`."""
        if not self.link_up(link, t):
            return 0.0
        line = self.link_speed(link) * 1e9 / 8
        jitter = 0.97 + 0.06 * self.noise("rate", link)
        if self._is_host_link(link):
            if self.dropping(link, t):
                return 0.0  # the leaf's PFC watchdog drops the lossless queue both ways
            share = self.scenario.workload.utilization * jitter * self.job_factor(t)
            for fault in self.storming(t):
                if fault.link == link:
                    share *= 0.05  # the storming NIC is paused itself: almost nothing moves
            return line * share
        # With PXN (NCCL's default, NCCL_PXN_DISABLE=0) a GPU's traffic to another rail
        # first crosses NVLink to the local GPU of that rail, so the job's collectives stay
        # on their rail's leaf: uplinks carry background traffic (storage, checkpoints) and
        # only the NICs whose cable lands on another rail's leaf (crossed cables).
        share = BACKGROUND_UPLINK_SHARE * jitter
        leaf = self._leaf_of_link(link)
        if leaf is not None:
            ups = self.uplinks(leaf)
            crossing = self._crossing_nics(leaf, t)
            if ups and crossing:
                share += crossing * self.scenario.workload.utilization * \
                    self.job_factor(t) / len(ups)
            alive = len(ups) - sum(1 for u in ups if u in self._by_link and
                                   not self.link_up(u, t)) or 1
            share *= len(ups) / alive
            if any(f.switch == leaf for f in self.active(FaultKind.INTERFERENCE, t)):
                share += 0.45 * jitter  # the other job's traffic shares these uplinks
        return line * min(share, 0.98)

    def _crossing_nics(self, leaf: str, t: float) -> int:
        """NICs whose traffic must cross the spines at `leaf`: the topology cables every NIC
        to its rail's leaf, so only cabling faults (swapped or moved cables) put a NIC of
        another rail on `leaf` or take one of its rail elsewhere."""
        return sum(1 for _, _, nominal, landed in self.moved_nics(t)
                   if landed and nominal != landed and leaf in (nominal, landed))

    def bytes_moved(self, link: int, t: float) -> int:
        """Bytes the link carried in one direction over [0, t]."""
        return int(self.integrate(lambda x: self.rate(link, x), t, link))

    # ECN and CNP -----------------------------------------------------------------------------
    def congestion(self, host: str, nic: Nic, t: float) -> tuple[float, float, float]:
        """(ECN-marked packets received, CNPs sent, CNPs handled) per second for a NIC.

        The two CNP counters are two directions (mlx5 counters.rst): as notification point the
        NIC answers the marked packets it *receives* with CNPs (`np_cnp_sent`, at most one per
        QP per `min_time_between_cnps`, so fewer than the marks), as reaction point it slows its
        *own* sends for the CNPs its peers return (`rp_cnp_handled`), which depend on the
        queues its traffic crosses, not the ones its receive traffic crosses. Each direction
        and NIC has its own share [inference: 35-45 % of marks answered, per direction].
        Another job on the NIC's leaf marks both directions heavily. A leaf whose WRED profile
        marks nothing (`ecn_marking`) marks no packet: no CNP either way."""
        where = self.actual_port(host, nic.name) or ""
        leaf = device_of(where)
        if not self.ecn_marking(leaf, t):
            return 0.0, 0.0, 0.0
        base = 3.0 + 5.0 * self.noise("cnp", host, nic.name)
        into = 0.35 + 0.1 * self.noise("np", host, nic.name)
        back = 0.8 + 0.4 * self.noise("rp", host, nic.name)
        for fault in self.active(FaultKind.INTERFERENCE, t):
            if fault.switch == leaf:
                marked = 52000.0 * (0.8 + 0.4 * self.noise("ecn", host, nic.name))
                return marked, marked * into, marked * into * back
        return base * 2.5, base * 2.5 * into, base * 2.5 * into * back

    # collective performance ------------------------------------------------------------------
    def busbw(self, nodes: Sequence[str], t: float, size: int, *,
              collective: str = "all_reduce", pxn: bool = True, mnnvl: bool = True) -> float:
        """Bus bandwidth (GB/s) of `collective` over `nodes` at message `size`.

        A healthy fabric reaches what fabtui.topology.expected derives from the topology (the
        figure the probes judge against, PXN included), or the simulation's modelled value
        where fabtui has no figure; faults take their share from there. Nodes of one
        multi-node NVLink domain cross over NVLink unless a node dropped out of it (or the run
        sets `NCCL_MNNVL_ENABLE=0`: `mnnvl`); then, as between other nodes, the NICs bound it
        at the speed their links trained at. With PXN (the default) alltoall stays on each
        rail's leaf; without it (`NCCL_PXN_DISABLE=1`) it crosses the spines and each leaf's
        lost uplinks cut it."""
        slow = {f.host: float(f.spec.params.get("busbw_factor", 0.55))
                for f in self.active(FaultKind.SLOW_NODE, t)}
        gdr_off = {f.host for f in self.active(FaultKind.GDR_OFF, t)}
        interference = {f.switch for f in self.active(FaultKind.INTERFERENCE, t)}
        members = [self.graph.nodes[n] for n in nodes if n in self.graph.nodes]
        shape = node_shape(members)
        peak = 0.0
        over_nvlink = len(nodes) == 1 or bool(
            shape is not None and shape.nvlink_domain_gpus and mnnvl and
            all(self.nvlink_registered(n.hostname, t) for n in members))
        if shape is not None:
            if not over_nvlink:  # the network: the NICs at the speed their links trained at
                trained = min((self.link_speed(a.link_index) for n in members for nic in n.nics
                               if (a := self.graph.attachments.get((n.hostname, nic.name)))),
                              default=shape.nic_speed_gbps)
                shape = replace(shape, nvlink_domain_gpus=0,
                                nic_speed_gbps=min(trained, shape.nic_speed_gbps))
            peak = self._healthy_busbw(collective, max(len(nodes), 1), shape)
        if len(nodes) == 1 and any(self.nvlink_lost(n, t) for n in nodes):
            peak *= NVLINK_LOST_SHARE
        if len(nodes) > 1 and not over_nvlink:
            if gdr_off & set(nodes):
                peak *= 0.52
            if interference and any(self._behind(n) & interference for n in nodes):
                peak *= 0.7
            storming = {self._leaf_of_link(f.link) for f in self.storming(t)
                        if f.link is not None and self.link_up(f.link, t)
                        and self._spreading(f, t)}
            if storming and any(self._behind(n) & storming for n in nodes):
                peak *= 0.25  # the paused leaf holds every rail flow through it
            if collective == "alltoall" and not pxn:
                # Without PXN a GPU sends to every other rail through its own NIC: (G-1)/G of
                # alltoall crosses the spines, so each leaf's lost uplinks cut it.
                peak *= min((self._uplink_share(leaf, t) for n in nodes
                             for leaf in self._behind(n)), default=1.0)
        if set(slow) & set(nodes):
            peak *= min(factor for host, factor in slow.items() if host in nodes)
        draining = [self._drain_share(f) for f in self.active(FaultKind.XMIT_WAIT, t)
                    if f.host in nodes]
        if draining and len(nodes) > 1:
            peak *= min(draining)
        if (self.active(FaultKind.NCCL_HANG, t) or self.cut_off(t) & set(nodes)) and \
                len(nodes) > 1:
            return 0.0
        jitter = 0.995 + 0.01 * self.noise("bw", tuple(nodes), size)  # stable run to run
        return peak * size / (size + 6e6) * jitter

    @staticmethod
    def _healthy_busbw(collective: str, nodes: int, shape: NodeShape) -> float:
        """What a healthy run of `collective` reaches: the expected figure, else the modelled
        one (broadcast / reduce, which have no model, move what all_reduce moves)."""
        moves = "all_reduce" if collective in ("broadcast", "reduce") else collective
        expected = expected_busbw(moves, nodes, shape)
        if expected is not None:
            return expected.value
        platform = PLATFORMS.get(shape.gpu or "")
        if platform is None or (shape.gpus < 2 and nodes == 1):
            return 0.0
        if moves != "all_reduce":
            return platform.nvlink_gbs * NVLINK_SM_EFFICIENCY
        if nodes > 1:
            return MODELLED_NVLINK_DOMAIN_ALL_REDUCE
        return MODELLED_SINGLE_NODE_ALL_REDUCE.get(platform.generation, 0.0)

    # the NVLink domain ------------------------------------------------------------------------
    def nvlink_lost(self, host: str, t: float, gpu: int | None = None) -> bool:
        """True when an `nvlink-down` fault takes the NVLinks of `gpu` (any GPU when None) of
        `host` at `t`."""
        return any(f.host == host and (gpu is None or f.gpu is None or f.gpu == gpu)
                   for f in self.active(FaultKind.NVLINK_DOWN, t))

    def nvlink_registered(self, host: str, t: float, gpu: int | None = None) -> bool:
        """True when `host` (its `gpu`, or all its GPUs) is registered in its multi-node NVLink
        domain at `t`; False for a node in none."""
        node = self.graph.nodes.get(host)
        return node is not None and node.nvlink_domain is not None and \
            not self.nvlink_lost(host, t, gpu)

    def fabric_ids(self, host: str) -> tuple[int, str]:
        """(CliqueId, ClusterUUID) the fabric manager gives `host`'s domain: one per domain."""
        domain = self.graph.nodes[host].nvlink_domain or ""
        value = int(self.noise("clique", domain) * 2**64)
        text = f"{value:016x}{int(self.noise('cluster', domain) * 2**64):016x}"
        return 1 + value % 8191, \
            f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:32]}"

    @staticmethod
    def rdma_ceiling(speed_gbps: int) -> float:
        """Gb/s a healthy RDMA write reaches between two NICs of `speed_gbps`."""
        return expected_rdma_gbps(speed_gbps).value

    def _uplink_share(self, leaf: str, t: float) -> float:
        """The share of `leaf`'s uplink capacity that is up at `t`."""
        ups = self.uplinks(leaf) if leaf in self.graph.switches else []
        if not ups:
            return 1.0
        return sum(1 for u in ups if self.link_up(u, t)) / len(ups)

    @cache  # noqa: B019 - a Sim lives as long as its topology; the cache is small
    def _behind(self, host: str) -> frozenset[str]:
        node = self.graph.nodes[host]
        return frozenset(device_of(self.actual_port(host, nic.name) or "")
                         for nic in node.nics)
