"""The simulated hung jobs: real log formats, a manifest that agrees with the topology, and the
same files for the same seed.

The format regexes are checked against the real samples they were taken from
(`../shared/samples`, copied into tests/fixtures where parser tests use them) before they judge
the simulated lines, so a regex that drifts from the real format fails here too.
"""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabtui.cli.app import cli
from fabtui.parsers import flight_recorder, nccl_log
from fabtui.sim.hangjob import CASES, JobSpec, SpecError, generate
from fabtui.sim.scenario import find_scenario, load_scenario
from fabtui.topology.graph import FabricGraph
from fabtui.topology.loader import load_topology, shipped_template

ROOT = Path(__file__).resolve().parent.parent

# Real lines (samples: slurmv4 NCCL 2.27.5 init; pytorch-watchdog-allreduce-rank1; ml-engineering
# completion error 12, mlengineering-pytorch-watchdog-timeout-desync-report; NCCL ras.rst).
REAL = {
    "init": "tpgds-aihub0008:207008:207008 [1] NCCL INFO ncclCommInitRank comm 0x5654997a1f80 "
            "rank 9 nranks 16 cudaDev 1 nvmlDev 1 busId 2a000 commId 0xde4443395863ef4a - Init "
            "START",
    "net_ib": "tpgds-aihub0008:207008:207008 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE "
              "[1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [RO]; OOB enp25s0np0:10.99.91.63<0>",
    "comm": "tpgds-aihub0008:207009:207009 [2] NCCL INFO comm 0x555bdf658400 rank 10 nRanks 16 "
            "nNodes 2 localRanks 8 localRank 2 MNNVL 0",
    "watchdog": "[rank1]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog "
                "caught collective operation timeout: WorkNCCL(SeqNum=6463, OpType=ALLREDUCE, "
                "NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800017 milliseconds before "
                "timing out.",
    "pg_status_24": "[rank1]:[E1003 18:37:01.833575187 ProcessGroupNCCL.cpp:1664] [PG 0 "
                    "(default_pg) Rank 1] Exception (either an error or timeout) detected by "
                    "watchdog at work: 6463, last enqueued NCCL work: 6463, last completed NCCL "
                    "work: 6462.",
    "pg_status_26": "[rank1]:[E1118 20:32:23.957372583 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG "
                    "GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence "
                    "id: 2635 PG status: last enqueued work: 2635, last completed work: 2634",
    "ib_old": "node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion "
              "from peer 10.2.0.5<33092> with error 12, opcode 0, len 0, vendor err 129 (Recv)",
    "desync": "     [1] finished collective #2, but didn't join collective #3 (count from 1)",
    "ras_count": "  26 ranks have launched up to operation 6650",
    "ras_rank": "  Rank 0 -- GPU 0 managed by process 483072 on node 172.16.64.210",
}
FORMATS = {
    "init": re.compile(r"^[\w.\-]+:\d+:\d+ \[\d+\] NCCL INFO (?:ncclCommInitRank )?comm "
                       r"0x[0-9a-f]+ rank (\d+) nranks (\d+) cudaDev (\d+) nvmlDev \d+ busId "
                       r"[0-9a-f]+ commId 0x[0-9a-f]+ - Init (?:START|COMPLETE)$"),
    "net_ib": re.compile(r"^[\w.\-]+:\d+:\d+ \[\d+\] NCCL INFO NET/IB : Using (?:\[\d+\]"
                         r"mlx5_\d+:1/RoCE ?)+ \[RO\]; OOB [\w.]+:[\d.]+<0>$"),
    "comm": re.compile(r"^[\w.\-]+:\d+:\d+ \[\d+\] NCCL INFO comm 0x[0-9a-f]+ rank \d+ nRanks \d+ "
                       r"nNodes \d+ localRanks \d+ localRank \d+ MNNVL 0$"),
    "watchdog": re.compile(r"^\[rank(\d+)\]:\[E\d{3,4} \d\d:\d\d:\d\d\.\d{9} "
                           r"ProcessGroupNCCL\.cpp:\d+\] \[Rank (\d+)\] Watchdog caught "
                           r"collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=(\w+), "
                           r"NumelIn=(\d+), NumelOut=(\d+), Timeout\(ms\)=(\d+)\) ran for (\d+) "
                           r"milliseconds before timing out\.$"),
    "pg_status_24": re.compile(r"^\[rank\d+\]:\[E\d{3,4} [\d:.]+ ProcessGroupNCCL\.cpp:\d+\] "
                               r"\[PG \d+ \(\w+\) Rank \d+\] Exception \(either an error or "
                               r"timeout\) detected by watchdog at work: \d+, last enqueued NCCL "
                               r"work: \d+, last completed NCCL work: \d+\.$"),
    "pg_status_26": re.compile(r"^\[rank\d+\]:\[E\d{3,4} [\d:.]+ ProcessGroupNCCL\.cpp:\d+\] "
                               r"\[PG ID \d+ PG GUID \d+\(\w+\) Rank \d+\]  failure detected by "
                               r"watchdog at work sequence id: \d+ PG status: last enqueued "
                               r"work: \d+, last completed work: \d+$"),
    "ib_old": re.compile(r"^[\w.\-]+:\d+:\d+ \[\d+\] transport/net_ib\.cc:\d+ NCCL WARN NET/IB : "
                         r"Got completion from peer ([\d.]+)<\d+> with error (\d+), opcode 0, len "
                         r"0, vendor err \d+ \((?:Recv|Send)\)"),
    "desync": re.compile(r"^\s+\[\d+\] (?:finished collective #\d+, but didn't join|joined but "
                         r"didn't finish) collective #\d+ \(count from 1\)$"),
    "ras_count": re.compile(r"^  \d+ ranks have launched up to operation \d+$"),
    "ras_rank": re.compile(r"^  Rank \d+ (?:has launched up to operation \d+ )?-- GPU \d+ "
                           r"managed by process \d+ on node [\d.]+$"),
}
# Newer completion errors (NCCL source: status= from 2.20, `NET/IB:` and `hca` from 2.23).
IB_NEW = re.compile(r"^(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] )?[\w.\-]+:\d+:\d+ \[\d+\] "
                    r"transport/net_ib\.cc:\d+ NCCL WARN NET/IB ?: Got completion from peer "
                    r"([\d.]+)<\d+> with status=(\d+) opcode=0 len=0 vendor err \d+ "
                    r"\((?:Recv|Send)\) localGid ::ffff:([\d.]+) remoteGids::ffff:([\d.]+)"
                    r"(?: hca (mlx5_\d+))?$")

REMOTE_GID = re.compile(r" remoteGids? ?::ffff:([\d.]+)")
"""The far NIC of a completion error (`remoteGid ` before NCCL 2.20, `remoteGids` after)."""
PEER = re.compile(r"Got completion from peer ([\d.]+)<")
"""The peer a completion error prints: the far host's socket (OOB) address."""
WATCHDOG_ANY = re.compile(r"\] \[Rank \d+\] Watchdog caught collective operation timeout: "
                          r"WorkNCCL\(SeqNum=\d+, OpType=(\w+), NumelIn=(\d+),")
"""Any PyTorch's first watchdog line (2.1 has no `[rankN]:` prefix nor a nanosecond stamp)."""


@pytest.fixture(scope="module")
def demo() -> FabricGraph:
    return FabricGraph(load_topology(ROOT / "topology" / "demo.yaml").topology)


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory, demo: FabricGraph) -> dict[str, Path]:
    """Every case at 32 ranks (4 nodes), on a release of each log generation; Flight Recorder
    dumps only where a test reads them."""
    base = tmp_path_factory.mktemp("hang")
    made = {}
    for i, case in enumerate(CASES):
        nccl = ("2.18", "2.22", "2.27")[i % 3]
        if case in ("all-launched-none-completed", "missing-log", "ras-minority",
                    "stale-pg-rank"):
            nccl = ("2.24", "2.25", "2.26")[i % 3]  # the cases whose story needs RAS
        made[case] = base / case
        generate(made[case], JobSpec(case=case, ranks=32, nccl=nccl, seed=7,
                                     flight_recorder=case in ("optic", "missing-log")), demo)
    return made


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _oob(rank_log: Path) -> str:
    """The OOB address a rank's init line prints (`NET/IB : Using ... OOB bond0:IP<0>`)."""
    return next(m.group(1) for line in _lines(rank_log)
                if (m := re.search(r"; OOB \w+:([\d.]+)<0>$", line)))


def _manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    return data


def test_format_regexes_match_the_real_samples() -> None:
    for name, pattern in FORMATS.items():
        assert pattern.search(REAL[name]), name


@pytest.mark.parametrize("case", list(CASES))
def test_every_case_writes_real_formats(case: str, jobs: dict[str, Path]) -> None:
    folder = jobs[case]
    manifest = _manifest(folder)
    logged = sorted(folder.glob("rank-*.log"))
    assert len(logged) == manifest["logged_ranks"]
    for path in logged:
        rank = int(path.stem.split("-")[1])
        lines = _lines(path)
        inits = [m for line in lines if (m := FORMATS["init"].match(line))]
        assert inits and all(int(m.group(1)) == rank and m.group(2) == "32" for m in inits)
        assert any(FORMATS["net_ib"].match(line) for line in lines)
        watchdogs = [m for line in lines if (m := FORMATS["watchdog"].match(line))]
        legacy = [line for line in lines if "Watchdog caught" in line and
                  line.startswith("[E ProcessGroupNCCL.cpp:")]
        if manifest["torch"] >= "2.2":
            assert not legacy
            assert all(int(m.group(1)) == rank for m in watchdogs)
        for line in lines:
            if "Got completion from peer" in line:
                assert FORMATS["ib_old"].match(line) or IB_NEW.match(line), line
            if "last enqueued" in line and manifest["torch"] >= "2.2":
                key = "pg_status_26" if manifest["torch"] >= "2.5" else "pg_status_24"
                assert FORMATS[key].match(line), line
            if "(count from 1)" in line:
                assert FORMATS["desync"].match(line.split(":", 1)[1] if line.startswith("[rank")
                                               else line), line
    for path in folder.glob("ras/*.txt"):
        for line in _lines(path):
            if "launched up to" in line and "ranks have" in line:
                assert FORMATS["ras_count"].match(line), line
            if line.startswith("  Rank "):
                assert FORMATS["ras_rank"].match(line), line


@pytest.mark.parametrize("case", list(CASES))
def test_manifest_agrees_with_the_topology(case: str, jobs: dict[str, Path],
                                           demo: FabricGraph) -> None:
    manifest = _manifest(jobs[case])
    assert manifest["verdict"] in ("culprit found", "network path", "application desync",
                                   "cannot tell")
    assert manifest["collective"]["op"] and manifest["collective"]["seq"] > 0
    for suspect in manifest["suspects"]:
        place = demo.placement(suspect["rank"])
        nic = place.nics[0]
        assert (suspect["node"], suspect["gpu"], suspect["nic"]) == (place.node, place.gpu,
                                                                      nic.nic)
        assert suspect["leaf_port"] == f"{nic.leaf}:{nic.leaf_port}"
        assert suspect["optic"] == nic.optic
        found = demo.find_nic(place.node, nic.nic)
        assert found is not None and suspect["ip"] == found.ip
    if manifest["culprits"] is None:
        assert manifest["suspects"] == [] and manifest["verdict"] != "culprit found"


def test_optic_case_is_the_demo_scenario(jobs: dict[str, Path]) -> None:
    manifest = _manifest(jobs["optic"])
    expect = load_scenario(find_scenario("nccl-hang")).scenario.expect
    assert manifest["culprits"] == [expect["rank"]]
    assert f"{manifest['node']}:{manifest['nic']}" == expect["component"]
    assert manifest["leaf_port"] == expect["port"] and manifest["optic"] == expect["optic"]
    # The culprit's NIC address is the remote GID of its rail peer's completion error; the peer
    # that line prints is the culprit host's OOB (socket) address, as real NCCL prints it.
    peer_log = _lines(jobs["optic"] / f"rank-{manifest['peer']['rank']}.log")
    errors = [line for line in peer_log
              if FORMATS["ib_old"].match(line) or IB_NEW.match(line)]
    assert [m.group(1) for line in errors if (m := REMOTE_GID.search(line))] == \
        [manifest["suspects"][0]["ip"]]
    culprit_oob = _oob(jobs["optic"] / f"rank-{manifest['culprits'][0]}.log")
    assert [m.group(1) for line in errors if (m := PEER.search(line))] == [culprit_oob]


def test_first_watchdog_is_a_victim(jobs: dict[str, Path]) -> None:
    folder = jobs["victim-first-watchdog"]
    manifest = _manifest(folder)
    culprit, first = manifest["culprits"][0], manifest["first_watchdog_rank"]
    assert first != culprit
    assert not any("Watchdog caught" in line for line in _lines(folder / f"rank-{culprit}.log"))
    fired = []
    for line in _lines(folder / "job.log"):
        body = line.split(": ", 1)[1]
        if (m := FORMATS["watchdog"].match(body)) is not None:
            fired.append((body[len(f"[rank{m.group(1)}]:[E"):].split(" Process")[0],
                          int(m.group(1))))
    assert min(fired)[1] == first
    # PyTorch 2.1 (NCCL 2.18 here) has no [rankN] prefix; this job is on a newer one.
    assert manifest["torch"] >= "2.2"


def test_rank0_can_be_the_culprit(jobs: dict[str, Path]) -> None:
    folder = jobs["culprit-rank0"]
    assert _manifest(folder)["culprits"] == [0]
    rank0 = _lines(folder / "rank-0.log")
    assert not any("Watchdog caught" in line or "count from 1" in line for line in rank0)
    text = (folder / "job.log").read_text()
    assert "[0] finished collective" in text  # the report moved to another rank


def test_missing_log_has_no_log_and_no_dump(jobs: dict[str, Path]) -> None:
    folder = jobs["missing-log"]
    culprit = _manifest(folder)["culprits"][0]
    assert not (folder / f"rank-{culprit}.log").exists()
    assert not (folder / "fr" / f"nccl_trace_rank_{culprit}").exists()
    assert f"rank {culprit} nranks" not in (folder / "job.log").read_text()
    ras = (folder / "ras" / "ncclras-status.txt").read_text()
    assert f"The missing rank: {culprit}" in ras and "DEAD" in ras


def test_ras_names_the_minority_ahead(jobs: dict[str, Path]) -> None:
    folder = jobs["ras-minority"]
    manifest = _manifest(folder)
    named = {int(m.group(1)) for line in _lines(folder / "ras" / "ncclras-status.txt")
             if (m := re.match(r"  Rank (\d+) ", line))}
    assert named == set(manifest["ras_named"])
    assert not named & set(manifest["culprits"])
    assert len(manifest["culprits"]) > len(named)


def test_status12_then_status5_cascade(jobs: dict[str, Path]) -> None:
    folder = jobs["status12-cascade"]
    statuses = [int(m.group(2)) for path in folder.glob("rank-*.log") for line in _lines(path)
                if (m := FORMATS["ib_old"].match(line) or IB_NEW.match(line))]
    assert statuses.count(12) == 2 and statuses.count(5) > 100


def test_connection_closed_cascade_starts_at_the_culprit(jobs: dict[str, Path]) -> None:
    folder = jobs["connection-closed-cascade"]
    manifest = _manifest(folder)
    closed = [line for line in _lines(folder / "job.log") if "Connection closed by localRank" in
              line]
    culprit_local = manifest["first_closed_local_rank"]
    assert closed[0].endswith(f"localRank {culprit_local}")
    assert manifest["node"] in closed[0]
    # The cascade names every local rank but the last one each agent stops (nobody is left to
    # see it go), on every node.
    assert len({line.rsplit(" ", 1)[1] for line in closed}) >= 7 and len(closed) > 100
    assert len({line.split(":", 1)[0] for line in closed}) == 4  # every node's agent


def test_stale_pg_rank_is_not_the_global_rank(jobs: dict[str, Path]) -> None:
    folder = jobs["stale-pg-rank"]
    manifest = _manifest(folder)
    members = manifest["pg_ranks"]
    assert manifest["collective"]["pg"] == "1"
    for rank in members:
        if rank in manifest["culprits"]:
            continue
        for line in _lines(folder / f"rank-{rank}.log"):
            if (m := FORMATS["watchdog"].match(line)) is not None:
                assert int(m.group(1)) == rank and int(m.group(2)) == members.index(rank)
                assert m.group(4) == "REDUCE_SCATTER"
    # RAS numbers ranks within each communicator too: the sub-group's names the culprit by its
    # group rank, the world's lists the whole stuck group.
    ras = (folder / "ras" / "ncclras-status.txt").read_text()
    culprit = manifest["culprits"][0]
    sub = ras[ras.index("#2-0"):]
    assert re.search(rf"^  Rank {manifest['pg_rank_of_culprit']} has launched up to operation "
                     rf"{manifest['collective']['seq'] - 1} ", sub, re.MULTILINE)
    world = ras[ras.index("#0-0"):ras.index("#2-0")]
    assert {int(r) for r in re.findall(r"^  Rank (\d+) --", world, re.MULTILINE)} == set(members)
    assert culprit in members


def test_none_completed_has_no_culprit_and_healthy_ras(jobs: dict[str, Path]) -> None:
    folder = jobs["all-launched-none-completed"]
    manifest = _manifest(folder)
    assert manifest["verdict"] == "network path" and manifest["culprits"] is None
    ras = (folder / "ras" / "ncclras-status.txt").read_text()
    assert re.search(r"RUNNING\s+OK$", ras, re.MULTILINE) and "Warnings" not in ras
    assert "NCCL WARN" not in (folder / "job.log").read_text()


def test_desyncs(jobs: dict[str, Path]) -> None:
    size = _manifest(jobs["desync-size"])
    sizes = {}
    for path in jobs["desync-size"].glob("rank-*.log"):
        for line in _lines(path):
            if (m := WATCHDOG_ANY.search(line)) is not None:
                sizes[int(path.stem.split("-")[1])] = int(m.group(2))
    assert sizes[size["culprits"][0]] == size["numel"]["culprit"]
    assert {v for k, v in sizes.items() if k != size["culprits"][0]} == {size["numel"]["expected"]}
    threads = _manifest(jobs["desync-threads"])
    ops: dict[str, set[int]] = {}
    for path in jobs["desync-threads"].glob("rank-*.log"):
        for line in _lines(path):
            if (m := WATCHDOG_ANY.search(line)) is not None:
                ops.setdefault(m.group(1), set()).add(int(path.stem.split("-")[1]))
    assert {k: sorted(v) for k, v in ops.items()} == threads["ops_at_seq"]


def test_two_faults_name_both(jobs: dict[str, Path]) -> None:
    manifest = _manifest(jobs["two-faults"])
    a, b = manifest["suspects"]
    assert a["node"] != b["node"] and a["nic"] != b["nic"]
    named = {g.group(1) for path in jobs["two-faults"].glob("rank-*.log") for line in _lines(path)
             if (m := IB_NEW.match(line) or FORMATS["ib_old"].match(line)) and
             m.group(2) == "12" and (g := REMOTE_GID.search(line))}
    assert {a["ip"], b["ip"]} <= named


def test_project_parsers_read_the_simulated_logs(jobs: dict[str, Path]) -> None:
    folder = jobs["optic"]
    manifest = _manifest(folder)
    peer = manifest["peer"]["rank"]
    log = nccl_log.parse((folder / f"rank-{peer}.log").read_text())
    errors = [e for e in log.events if e.type == "ib_completion_error"]
    assert errors and errors[0].remote_gid == "::ffff:" + manifest["suspects"][0]["ip"]
    assert errors[0].peer == _oob(folder / f"rank-{manifest['culprits'][0]}.log")
    dump = pickle.loads((folder / "fr" / f"nccl_trace_rank_{peer + 1}").read_bytes())
    parsed = flight_recorder.parse((folder / "fr" / f"nccl_trace_rank_{peer + 1}.json")
                                   .read_text())
    assert parsed.rank == peer + 1 and len(parsed.entries) == len(dump["entries"])
    last = parsed.entries[-1]
    assert last.collective_seq_id == manifest["collective"]["seq"] and last.state == "started"
    assert dump["entries"][-1]["process_group"] == ("0", "default_pg")


def test_same_seed_same_files(tmp_path: Path, demo: FabricGraph) -> None:
    def files(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
                if p.is_file()}

    spec = JobSpec(case="victim-first-watchdog", ranks=32, nccl="2.26", seed=3)
    generate(tmp_path / "a", spec, demo)
    generate(tmp_path / "b", spec, demo)
    generate(tmp_path / "c", JobSpec(case="victim-first-watchdog", ranks=32, nccl="2.26",
                                     seed=4), demo)
    assert files(tmp_path / "a") == files(tmp_path / "b")
    assert files(tmp_path / "a") != files(tmp_path / "c")


def test_big_generated_topology_and_padding(tmp_path: Path) -> None:
    path = shipped_template("h100-1024gpu-rail")
    assert path is not None
    graph = FabricGraph(load_topology(path).topology)
    manifest = generate(tmp_path, JobSpec(case="optic", ranks=1024, nccl="2.27",
                                          bytes_per_rank=20_000, flight_recorder=False,
                                          combined=False), graph)
    assert manifest["culprits"] == [21] and manifest["node"] == "node003"
    assert len(list(tmp_path.glob("rank-*.log"))) == 1024
    assert 18_000 < (tmp_path / "rank-500.log").stat().st_size < 40_000


def test_specs_that_cannot_be_generated(tmp_path: Path, demo: FabricGraph) -> None:
    for spec, words in [(JobSpec(case="optic", ranks=16), "3 nodes"),
                        (JobSpec(case="nope", ranks=16), "unknown case"),
                        (JobSpec(case="optic", ranks=12), "multiple of 8"),
                        (JobSpec(case="optic", ranks=128), "places only 64"),
                        (JobSpec(case="optic", ranks=64, nccl="2.30"), "2.18 to 2.27"),
                        (JobSpec(case="all-launched-none-completed", ranks=64, nccl="2.21"),
                         "2.24"),
                        (JobSpec(case="optic", ranks=64, torch="1.13"), "PyTorch")]:
        with pytest.raises(SpecError, match=words):
            generate(tmp_path, spec, demo)


def test_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["sim", "hang-logs", str(tmp_path / "job"), "--case",
                                 "desync-size", "--ranks", "16", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["verdict"] == "application desync"
    assert (tmp_path / "job" / "expected.json").is_file()
    bad = runner.invoke(cli, ["sim", "hang-logs", str(tmp_path / "x"), "--case", "optic",
                              "--ranks", "8"])
    assert bad.exit_code == 2 and "needs at least 3 nodes" in bad.output
    again = runner.invoke(cli, ["sim", "hang-logs", str(tmp_path / "job"), "--case", "optic",
                                "--ranks", "32"])
    assert again.exit_code == 2 and "not an empty folder" in again.output


def test_a_rank_file_moves_the_culprit_and_its_peers(tmp_path: Path) -> None:
    from fabtui.topology.ranks import parse_rank_text

    topology = load_topology(ROOT / "topology" / "demo.yaml").topology
    # Nodes in reverse order: rank 0 on node008 ... rank 63 on node001 GPU 7.
    text = "".join(f"node{8 - i // 8:03d} {i % 8}\n" for i in range(64))
    graph = FabricGraph(topology, parse_rank_text(text, topology, "ranks.txt"))
    manifest = generate(tmp_path, JobSpec(case="optic", ranks=64, nccl="2.21"), graph)
    assert manifest["culprits"] == [45] and manifest["node"] == "node003"  # still GPU 5 there
    assert manifest["leaf_port"] == "leaf-g00-r5:Ethernet16"
    peer = manifest["peer"]
    assert peer["node"] in ("node002", "node004") and peer["gpu"] == 5  # rail peer, same rail
    for line in _lines(tmp_path / "rank-45.log"):
        if (m := FORMATS["init"].match(line)) is not None:
            assert m.group(1) == "45" and m.group(3) == "5"
