"""`fabtui triage nccl` as users run it: the report forms, the exit codes, one-line errors."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.config import load_settings
from tests.support.case_seed import seed_case_library

FIXTURES = Path(__file__).parent / "triage_fixtures"


@pytest.fixture(autouse=True)
def _case_library_built() -> None:
    """The report's similar cases come from a library already built, as on any run after the
    first (tests/support/case_seed.py): building it is the case library's tests' subject."""
    seed_case_library(load_settings())


def test_text_report_names_the_culprit_and_exits_1(run: Callable[..., Result]) -> None:
    result = run("triage", "nccl", str(FIXTURES / "victim-first"))
    assert result.exit_code == 1
    assert "verdict: culprit found" in result.output
    assert "lagging" in result.output and "leaf-g00-r2:Ethernet0" in result.output
    assert "next: fabtui runbook run nccl-hang-triage --input log_node=node001" in result.output


def test_json_follows_the_documented_schema(run: Callable[..., Result]) -> None:
    result = run("triage", "nccl", "--json", str(FIXTURES / "ib-flush"))
    data = json.loads(result.output)
    assert data["verdict"] == "culprit found"
    first = data["suspects"][0]
    assert {"rank", "node", "gpu", "nic", "port", "peer", "reason", "evidence"} <= set(first)
    assert first["evidence"][0]["file"].endswith("job.log") and first["evidence"][0]["line"]
    assert data["collective"]["seq"] == 2048 and data["collective"]["op"] == "ALLREDUCE"
    assert data["similar_cases"][0] == "nccl-hang-optic-rail5-node003"  # an IB error-12 hang
    assert data["chain"] is None  # probing the fabric is asked for (--chain)
    assert data["next"][0]["runbook"] == "nccl-hang-triage"


def test_markdown_to_a_file(run: Callable[..., Result], tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    result = run("triage", "nccl", "--format", "md", "-o", str(out),
                 str(FIXTURES / "network-path"))
    assert result.output == ""
    text = out.read_text()
    assert text.startswith("# NCCL hang triage") and "**Verdict: network path.**" in text


def test_a_rank_file_places_ranks_where_the_logs_name_no_host(
        run: Callable[..., Result], tmp_path: Path) -> None:
    ranks = tmp_path / "ranks.txt"
    ranks.write_text("".join(f"{r} node004 {r}\n" for r in range(8)))
    result = run("triage", "nccl", "--json", "--ranks", str(ranks),
                 str(FIXTURES / "missing-log"))
    first = json.loads(result.output)["suspects"][0]
    assert (first["rank"], first["node"], first["gpu"], first["nic"]) == \
        (7, "node004", 7, "mlx5_7")
    assert first["port"] == "leaf-g00-r7:Ethernet24"


def test_a_missing_path_is_one_line_and_exit_2(run: Callable[..., Result]) -> None:
    result = run("triage", "nccl", "no/such/log")
    assert result.exit_code == 2
    assert result.output.strip() == "no/such/log: no such file or folder"


def test_an_unsafe_pickle_is_one_line_and_exit_2(run: Callable[..., Result],
                                                 tmp_path: Path) -> None:
    dump = tmp_path / "trace_0"
    dump.write_bytes(pickle.dumps({"entries": [print]}))
    result = run("triage", "nccl", str(dump))
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "refers to builtins.print" in result.output


def test_world_size_names_the_rank_that_never_timed_out(run: Callable[..., Result]) -> None:
    # huggingface/open-r1#620 (tests/triage_fixtures/real): ranks 1-6 time out, rank 0 never
    # does; the logs do not give the job's size, the operator does.
    case = str(FIXTURES / "real" / "openr1-620-rank0-never-timed-out-wrapped")
    unsized = run("triage", "nccl", "--no-similar", case)
    assert unsized.exit_code == 0 and "verdict: cannot tell" in unsized.output
    assert "collect: the logs of rank(s) 0:" in unsized.output
    sized = run("triage", "nccl", "--no-similar", "--json", "--world-size", "7", case)
    assert sized.exit_code == 1
    data = json.loads(sized.output)
    assert (data["world_size"], data["world_size_source"], data["hung_seq"]) == (
        7, "--world-size", 4)
    assert [(s["kind"], s["rank"], s["confidence"]) for s in data["suspects"]] == [
        ("missing log", 0, "medium")]
    assert run("triage", "nccl", "--world-size", "0", case).exit_code == 2
