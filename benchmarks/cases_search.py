"""Case search at scale: fabtui's index beside SQLite FTS5 on the same corpus, same queries.

Rows, each with the FTS5 figure measured in this run and the ratio (issue "Performance"):
  - full reindex time and index size
  - AND queries, OR queries, ranked queries (the default) p50 / p99, with snippets
  - search-as-you-type: every keystroke of a query, the last word a prefix
  - filing one case: an upsert (fabtui) / INSERT OR REPLACE (FTS5), p50 / max
  - a cold search: a new process checks the index and searches once, as the CLI does
  - growth: at three sizes, the exponent of the reindex's CPU seconds (its worker processes
    included), of a warm ranked query's and of a cold search's, each from the smallest size
    to the largest and of what each step adds (fixed costs cancel out): about 1 when linear in
    the cases, 2 for a quadratic term
Goals: 10,000 cases p50 <= 20 ms, p99 <= 80 ms, upsert <= 100 ms; 100,000 cases p50 <= 100 ms,
p99 <= 400 ms, reindex <= 5 min. The corpus varies realistic fabric incidents (NCCL hangs,
busbw drops, PFC storms, FEC and optic failures, Xid faults ... in English and Chinese) over
the nodes, rails, ports and values of a 1,024-GPU cluster. Prints figures; never fails on time.

    python benchmarks/cases_search.py            # 10,000, 30,000, 100,000 cases (minutes)
    python benchmarks/cases_search.py --smoke    # 2,500, 5,000, 10,000 cases, fewer queries (CI)
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from growth import print_growth

from fabtui.cases.document import IndexDoc
from fabtui.cases.index import CaseIndex

# (symptom_class, title, symptom, root cause, resolution, body, tags, lang) with {slots}.
TEMPLATES: list[tuple[str, str, str, str, str, str, list[str], str]] = [
    ("nccl-hang", "NCCL all-reduce hangs at {ranks} ranks; retry exceeded on {node} {nic}",
     "Training stalled at step {step}; the NCCL watchdog fired on every rank after {secs} s. "
     "Rank {rank} logged: NCCL WARN NET/IB : Got completion from peer {peer} with status=12 "
     "opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.{rail}.{a}.{b}.",
     "The optic on {leaf} {port} (serial {serial}) was degrading: rx power {rx} dBm on lane 2 "
     "and rising symbol errors, so the QP hit the transport retry limit.",
     "Drained {node}, replaced the transceiver, cleared counters and ran all_reduce_perf for "
     "{mins} minutes with no errors before returning the node to the pool.",
     "Timeline: job started, hang detected by the watchdog, flight recorder dumps showed rank "
     "{rank} stuck in ncclKernel_AllReduce_RING. ibstat on {node} showed {nic} Active. "
     "Lesson: alert on symbol_error deltas per port, not only on link state.",
     ["nccl-hang", "optic", "ib-status-12"], "en"),
    ("busbw-low", "all_reduce_perf busbw dropped to {bw} GB/s on rail {rail}",
     "nccl-tests busbw fell from {good} GB/s to {bw} GB/s at 8 GB messages across {nodes} "
     "nodes; only traffic through rail {rail} was slow, other rails at line rate.",
     "{leaf} {port} had auto-negotiated to {speed}G after a firmware upgrade; one link at half "
     "speed throttled the whole ring.",
     "Forced the port speed to 400G, bounced the link, and reran nccl-tests: busbw back to "
     "{good} GB/s.",
     "Checked ethtool on {node} {netdev}: Speed {speed}000Mb/s. Switch counters showed no "
     "drops. Risk: do not copy the speed override to ports with older optics.",
     ["busbw-low", "rail-{rail}"], "en"),
    ("pfc-storm", "PFC pause storm from {node} freezes rail {rail} traffic",
     "Jobs on {nodes} nodes slowed down together; switch {leaf} reported rx pause frames on "
     "{port} growing by {pause} per second and ECN marks everywhere.",
     "{node} {nic} had a stuck receive queue (PCIe AER errors), so it sent PFC pause frames "
     "continuously; the pause propagated upstream to the spine.",
     "Shut {port}, enabled the PFC watchdog on all leaves, replaced the NIC on {node}.",
     "Evidence: rx_prio3_pause {pause}/s, tx_prio3_pause 0, pfc watchdog disabled. "
     "Lesson: keep the PFC watchdog enabled on every lossless queue.",
     ["pfc-storm", "pfc", "congestion"], "en"),
    ("fec-errors", "Rising FEC corrected codewords and BER on {leaf} {port}",
     "Pre-FEC BER climbed to {ber} on {port}; corrected codewords increasing by millions per "
     "minute and a few uncorrectable blocks; NCCL busbw dipped on rail {rail}.",
     "A dirty fiber connector between {leaf} {port} and {node} {nic}.",
     "Cleaned both ends of the fiber, reseated the cable; BER back to 1e-12.",
     "mlxlink showed Effective BER {ber}, raw errors on lanes 0-3. Checked DOM: temperature "
     "{temp} C, rx power normal. Tip: clean connectors before replacing optics.",
     ["fec-errors", "fec", "ber"], "en"),
    ("gpu-xid", "GPU fell off the bus: Xid 79 on {node} gpu{gpu}",
     "Job crashed with CUDA error 999; dmesg on {node} showed NVRM: Xid (PCI:0000:{pci}:00): "
     "79, GPU has fallen off the bus. nvidia-smi lists only 7 GPUs.",
     "GPU {gpu} on {node} failed (thermal event {temp} C before the fault), a hardware fault.",
     "Cordoned {node}, RMA for the GPU baseboard, ran dcgmi diag -r 3 after the repair.",
     "Xid 79 follows Xid 48 double-bit ECC on some boards. Lesson: check power and thermals "
     "history before reseating.", ["gpu-xid", "xid-79"], "en"),
    ("slow-node", "One slow node ({node}) drags a {nodes}-node job",
     "Step time rose by {pct}% across the whole job; the straggler was {node}, whose GPUs "
     "ran at reduced clocks.", "{node} had a failed fan so GPUs throttled (clocks event reason "
     "HW slowdown).", "Replaced the fan tray; step time back to baseline.",
     "nvidia-smi -q showed Clocks Event Reasons: HW Slowdown Active. Per-rank timing from the "
     "flight recorder found rank {rank}.", ["slow-node", "thermal"], "en"),
    ("roce-config-mismatch", "RoCE MTU mismatch between {node} and {leaf}",
     "ib_write_bw between {node} and {peer} reached only {bw} Gb/s; packets over 4096 bytes "
     "were dropped, ibv_devinfo active_mtu 1024.",
     "{leaf} {port} MTU 9000 but {node} {netdev} MTU 1500 after a reimage; RoCE used MTU 1024.",
     "Set MTU 9000 on {netdev} via netplan, verified active_mtu 4096.",
     "show_gids listed the RoCE v2 GID index 3. Lesson: check MTU in the node image.",
     ["roce-config-mismatch", "mtu"], "en"),
    ("link-flap", "{leaf} 端口 {port} 链路抖动，训练任务反复卡住",
     "训练任务在第 {step} 步附近反复卡住，NCCL 超时 {secs} 秒；交换机 {leaf} 的 {port} "
     "端口一小时内 link down {flaps} 次，{node} 日志里有 mlx5_core 端口状态变化。",
     "光模块 {serial} 老化，收光功率 {rx} dBm，低于告警阈值，导致链路闪断。",
     "更换光模块并清理光纤端面，观察 24 小时无抖动，恢复任务。",
     "排查过程：先看 NCCL 日志定位到 rank {rank}，再查 ibstat 和交换机端口计数，误码计数持续"
     "上升。经验：链路抖动先看光功率和误码。", ["link-flap", "optic"], "zh"),
    ("port-drops", "{leaf} {port} 丢包导致 allreduce 带宽低",
     "nccl-tests 带宽从 {good} GB/s 降到 {bw} GB/s，交换机 {port} 出方向 discards 持续增长，"
     "rail {rail} 上的作业都受影响。",
     "{leaf} 的缓冲区配置错误，无损队列没有开启 PFC，拥塞时直接丢包。",
     "修正 QoS 配置，开启 PFC 与 ECN，重跑 nccl-tests 带宽恢复。",
     "证据：tx_discards {pause}/s，pfc 计数为 0。风险：不要把该 buffer 配置复用到别的型号。",
     ["port-drops", "pfc"], "zh"),
    ("gdr-not-effective", "GPUDirect RDMA 未生效，{node} 通信走了 CPU 内存",
     "{node} 上 NCCL 日志显示 NET/IB : GPU Direct RDMA Disabled for HCA {nic}，"
     "busbw 只有 {bw} GB/s。", "nvidia_peermem 模块没有加载（驱动升级后遗漏）。",
     "modprobe nvidia_peermem 并加入开机加载，NCCL 日志出现 GDRDMA，带宽恢复。",
     "环境：CUDA 12.4，OFED 24.01。经验：升级驱动后检查 peermem。",
     ["gdr-not-effective", "gdr"], "zh"),
]

FILLERS = ["Reviewed by the fabric team.", "Follow-up filed with the vendor.",
           "Monitoring added to the dashboard.", "相关告警已加入值班手册。",
           "Soak test passed overnight.", "The same rack had a similar issue last quarter."]

QUERIES = [
    "nccl hang retry exceeded", "allreduce slow rail 3", "busbw drop after firmware upgrade",
    "pfc storm pause frames", "fec errors ber rising", "xid 79 fell off the bus",
    "gpu fell off bus node042", "optic rx power low", "mtu mismatch roce",
    "slow node throttled clocks", "link flap transceiver", "watchdog timeout training stuck",
    "光模块 误码", "链路抖动 训练卡住", "nccl 超时", "丢包 带宽低", "GPUDirect 未生效",
    "status 12 mlx5_3", "leaf-g00-r5 Ethernet16", "ecn marks congestion spine",
]
AND_QUERIES = ["nccl AND hang", "busbw AND rail 3", "pfc AND pause AND storm", "xid 79 AND node042",
               "optic AND rx power", "光模块 AND 误码", "mtu AND roce", "fec AND ber AND fiber"]
OR_QUERIES = ["nccl OR hang", "busbw OR bandwidth", "pfc OR ecn", "xid OR fallen",
              "optic OR transceiver", "光模块 OR 误码", "mtu OR gid", "straggler OR throttle"]
TYPED = ["transceiver rx power", "pfc watchdog", "nccl timeout", "fell off the bus"]


def corpus(n: int, seed: int = 7) -> Iterator[IndexDoc]:
    """`n` cases: each a template filled with a random cluster location and values, with
    sentences from other cases mixed in so that no two cases read the same."""
    rng = random.Random(seed)
    for i in range(n):
        cls, title, symptom, cause, fix, body, tags, lang = TEMPLATES[i % len(TEMPLATES)]
        rail = rng.randrange(8)
        node = f"node{rng.randrange(1, 129):03d}"
        group = rng.randrange(4)
        slots = {
            "node": node, "peer": f"node{rng.randrange(1, 129):03d}", "rail": rail,
            "nic": f"mlx5_{rail}", "netdev": f"ens{rail + 1}np0", "gpu": rng.randrange(8),
            "leaf": f"leaf-g{group:02d}-r{rail}", "port": f"Ethernet{rng.randrange(0, 64) * 4}",
            "serial": f"MT{rng.randrange(23, 26)}{rng.randrange(10**6):06d}",
            "ranks": rng.choice([64, 128, 256, 512, 1024]), "step": rng.randrange(100, 90000),
            "secs": rng.choice([600, 1200, 1800]), "rank": rng.randrange(1024),
            "a": rng.randrange(256), "b": rng.randrange(256), "rx": -round(rng.uniform(8, 14), 1),
            "mins": rng.choice([30, 60, 120]), "bw": rng.randrange(40, 300),
            "good": rng.randrange(360, 400), "nodes": rng.choice([16, 32, 64, 128]),
            "speed": rng.choice([100, 200]), "pause": rng.randrange(10**4, 10**6),
            "ber": f"{rng.randrange(1, 9)}e-{rng.randrange(5, 8)}", "temp": rng.randrange(70, 95),
            "pci": f"{rng.randrange(16, 255):02x}", "pct": rng.randrange(10, 60),
            "flaps": rng.randrange(3, 40),
        }
        other = TEMPLATES[rng.randrange(len(TEMPLATES))]
        extra = " ".join(rng.sample(FILLERS, 2))
        yield IndexDoc(
            id=f"case-{i:06d}", title=title.format(**slots), symptom=symptom.format(**slots),
            root_cause=cause.format(**slots), resolution=fix.format(**slots),
            body=body.format(**slots) + " " + other[5].format(**slots) + " " + extra,
            components=[node, f"{node}:mlx5_{rail}", slots["leaf"],
                        f"{slots['leaf']}:{slots['port']}", f"rail{rail}"],
            tags=[t.format(**slots) for t in tags], error_codes=[t for t in tags if
                                                                re.search(r"\d", t)],
            symptom_class=cls, severity=rng.choice(["sev1", "sev2", "sev3", "sev4"]),
            status=rng.choice(["resolved", "resolved", "unresolved", "draft"]), lang=lang,
            opened=f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
            rails=[rail], nodes=[node],
        )


# --- the SQLite FTS5 reference ------------------------------------------------------------

def fts_build(path: Path, docs: list[IndexDoc]) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE cases USING fts5(id UNINDEXED, title, symptom, root_cause,"
               " resolution, body, keys)")
    with db:
        db.executemany("INSERT INTO cases VALUES (?,?,?,?,?,?,?)", (fts_row(d) for d in docs))
    return db


def fts_row(d: IndexDoc) -> tuple[str, ...]:
    return (d.id, d.title, d.symptom, d.root_cause, d.resolution, d.body,
            " ".join([*d.components, *d.tags, *d.error_codes]))


def fts_upsert(db: sqlite3.Connection, doc: IndexDoc) -> None:
    with db:
        db.execute("DELETE FROM cases WHERE id = ?", (doc.id,))
        db.execute("INSERT INTO cases VALUES (?,?,?,?,?,?,?)", fts_row(doc))


def fts_query(text: str) -> str:
    """The query as FTS5 syntax: every word quoted (so nothing is an operator by accident),
    AND / OR kept, a trailing * kept as a prefix."""
    out = []
    for word in text.split():
        if word in ("AND", "OR"):
            out.append(word)
            continue
        prefix = word.endswith("*")
        word = word.rstrip("*").replace('"', "")
        if word:
            out.append(f'"{word}"' + ("*" if prefix else ""))
    if "AND" not in out:  # a ranked query: any word, best first (as fabtui's default)
        out = [w for w in out if w != "OR"]
        return " OR ".join(out)
    return " ".join(out)


def fts_search(db: sqlite3.Connection, text: str) -> list[tuple[str, str]]:
    sql = ("SELECT id, snippet(cases, -1, '[', ']', '…', 24) FROM cases WHERE cases MATCH ? "
           "ORDER BY bm25(cases, 0, 3.0, 2.0, 1.5, 0.8, 0.5, 2.5) LIMIT 10")
    return db.execute(sql, (fts_query(text),)).fetchall()


# --- measuring ------------------------------------------------------------------------------

def timed(fn: Callable[[], object], cpu: list[float] | None = None) -> float:
    """Wall seconds of `fn()`; its CPU seconds go to `cpu` (on a shared machine the wall
    figure mostly measures the wait for a core)."""
    start, started_cpu = time.perf_counter(), time.process_time()
    fn()
    if cpu is not None:
        cpu.append(time.process_time() - started_cpu)
    return time.perf_counter() - start


def compare(label: str, queries: list[str], rounds: int, index: CaseIndex,
            db: sqlite3.Connection, goals: dict[str, float]) -> float:
    """Print the rows of `queries` against FTS5; ours p50 CPU milliseconds."""
    ours: list[float] = []
    ref: list[float] = []
    ours_cpu: list[float] = []
    ref_cpu: list[float] = []
    for _ in range(rounds):
        for q in queries:  # interleaved, so load on the machine weighs on both alike
            ours.append(timed(lambda q=q: index.search(q), ours_cpu))
            ref.append(timed(lambda q=q: fts_search(db, q), ref_cpu))
    for kind, a, b in (("", ours, ref), (", CPU time", ours_cpu, ref_cpu)):
        (o50, o99), (r50, r99) = percentiles(a), percentiles(b)
        row(f"{label} p50{kind}", o50, r50, "ms", goals.get("p50"))
        row(f"{label} p99{kind}", o99, r99, "ms", goals.get("p99"))
    return percentiles(ours_cpu)[0]


GENERATION = "g0"
"""The store generation the benchmark's index is built at (the cold row's health check)."""


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000


def keystrokes(queries: list[str]) -> list[str]:
    """Every prefix a person types, from two characters on, the last word searched as a prefix."""
    out = []
    for q in queries:
        for end in range(2, len(q) + 1):
            typed = q[:end]
            if not typed.endswith(" "):
                out.append(typed + "*")
    return out


def du(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1024 / 1024


def row(label: str, ours: float, ref: float, unit: str, goal: float | None) -> None:
    ratio = ours / max(ref, 1e-9)
    verdict = "" if goal is None else ("ok" if ours <= goal else "OVER GOAL")
    goal_text = f"(goal <= {goal:g} {unit})" if goal is not None else ""
    print(f"  {label:<30} {ours:9.1f} {unit:<3} FTS5 {ref:9.1f} {unit:<3} ratio {ratio:6.1f}x "
          f"{goal_text:<20} {verdict}")


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended (the reindex's workers)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def run(n: int, rounds: int, goals: dict[str, float], folder: Path,
        light: bool = False) -> dict[str, float]:
    """Every row at `n` cases (`light`: the reindex, ranked queries and the cold search
    only, for the growth line); the figures the growth line needs."""
    print(f"\n{n:,} cases")
    docs = list(corpus(n))
    index = CaseIndex(folder / f"ix-{n}")
    cpu = cpu_seconds()
    build = timed(lambda: index.ensure(lambda: docs, GENERATION))
    build_cpu = cpu_seconds() - cpu
    fts_path = folder / f"fts-{n}.db"
    cpu, start = cpu_seconds(), time.perf_counter()
    db = fts_build(fts_path, docs)
    fts_time, fts_cpu = time.perf_counter() - start, cpu_seconds() - cpu
    row("full reindex", build, fts_time, "s", goals.get("reindex"))
    row("full reindex, CPU time", build_cpu, fts_cpu, "s", goals.get("reindex"))
    row("index size", du(folder / f"ix-{n}"), fts_path.stat().st_size / 1024 / 1024, "MB", None)
    index.search("warm up")
    fts_search(db, "warm up")
    for label, queries in (() if light else (("AND queries", AND_QUERIES),
                                              ("OR queries", OR_QUERIES))):
        compare(label, queries, rounds, index, db, goals)
    ranked = compare("ranked queries", QUERIES, rounds, index, db, goals)
    if not light:
        compare("search-as-you-type", keystrokes(TYPED[: 2 if rounds < 3 else None]), 1, index,
                db, goals)
    cold_p50 = cold(folder / f"ix-{n}", fts_path, QUERIES[: 4 if rounds < 3 else 10], goals)
    figures = {"reindex CPU s": build_cpu, "ranked query CPU ms": ranked,
               "cold search CPU ms": cold_p50}
    if light:
        index.close()
        db.close()
        return figures
    ours: list[float] = []
    ref: list[float] = []
    fresh = list(corpus(10 * rounds, seed=99))
    for i, doc in enumerate(fresh):
        doc.id = f"new-{i}"
        ours.append(timed(lambda doc=doc, i=i: index.upsert([doc], f"g{i + 1}")))
        ref.append(timed(lambda doc=doc: fts_upsert(db, doc)))
    row("filing one case p50", statistics.median(ours) * 1000, statistics.median(ref) * 1000,
        "ms", goals.get("upsert"))
    row("filing one case max", max(ours) * 1000, max(ref) * 1000, "ms", None)
    index.close()
    db.close()
    return figures


_COLD_OURS = """
import sys, time
from fabtui.cases.index import CaseIndex
began, cpu = time.perf_counter(), time.thread_time()
index = CaseIndex(sys.argv[1])
index.state(sys.argv[3])
index.search(sys.argv[2])
print(time.perf_counter() - began, time.thread_time() - cpu)
"""
_COLD_FTS = """
import sys, time, sqlite3
sys.path.insert(0, sys.argv[3])
from cases_search import fts_search
began, cpu = time.perf_counter(), time.thread_time()
fts_search(sqlite3.connect(sys.argv[1]), sys.argv[2])
print(time.perf_counter() - began, time.thread_time() - cpu)
"""


def cold(index_dir: Path, fts_path: Path, queries: list[str],
         goals: dict[str, float]) -> float:
    """Each query as the CLI runs it: a new process checks the index is current (the health
    check `CaseLibrary.search` runs first) and searches once (no searcher, postings or lengths
    cached in memory; long posting lists an earlier search stored beside the index are loaded,
    as a CLI user's second search finds them); FTS5 the same way. Imports are not counted.
    Rows of wall and CPU milliseconds (the searching thread's: numpy's native threads, started
    by its import, were counted too and made CI's CPU figure twice the wall's); returns the
    CPU p50 (steadier on a shared machine)."""
    import subprocess
    import sys

    here = str(Path(__file__).resolve().parent)
    ours: list[tuple[float, float]] = []
    ref: list[tuple[float, float]] = []
    for query in queries:
        for code, args, into in ((_COLD_OURS, [str(index_dir), query, GENERATION], ours),
                                 (_COLD_FTS, [str(fts_path), query, here], ref)):
            done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                                  text=True, check=True, timeout=600)
            wall, cpu = done.stdout.split()[-2:]
            into.append((float(wall), float(cpu)))
    for kind, at in (("", 0), (", CPU time", 1)):
        row(f"cold process search p50{kind}", statistics.median(x[at] for x in ours) * 1000,
            statistics.median(x[at] for x in ref) * 1000, "ms", goals.get("p50"))
    return float(statistics.median(x[1] for x in ours)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="10,000 cases, fewer queries (CI)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} CPUs, load average {load:.1f} (figures scale with it; the ratio to "
          f"FTS5 much less); corpus from {len(TEMPLATES)} incident templates")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        figures: dict[int, dict[str, float]] = {}
        for n in (2_500, 5_000) if args.smoke else ():
            figures[n] = run(n, 2, {}, folder, light=True)
        figures[10_000] = run(10_000, 2 if args.smoke else 10,
                              {"p50": 20, "p99": 80, "upsert": 100}, folder)
        if not args.smoke:
            figures[30_000] = run(30_000, 3, {}, folder, light=True)
            figures[100_000] = run(100_000, 3, {"p50": 100, "p99": 400, "reindex": 300},
                                   folder)
        print()
        print_growth(figures, "cases", "linear in the cases")


if __name__ == "__main__":
    main()
