"""`fabtui triage nccl` as users run it: the report forms, the exit codes, one-line errors."""

from __future__ import annotations

import itertools
import json
import pickle
import re
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


def _evidence_of(run: Callable[..., Result], *paths: str) -> tuple[list[str], list[str]]:
    """The whole report's evidence lines (`file:line: text`, once each, in order) and
    warnings (`file:line`), from its JSON form, which is never cut."""
    data = json.loads(run("triage", "nccl", "--no-similar", "--json", *paths).output)
    evidence = [f"{e['file']}:{e['line']}: {e['text']}"
                for s in data["suspects"] for e in s["evidence"]]
    warnings = [f"{w['evidence']['file']}:{w['evidence']['line']}" for w in data["warnings"]]
    return list(dict.fromkeys(evidence)), warnings


def test_text_report_says_how_much_evidence_it_left_out_and_full_shows_it(
        run: Callable[..., Result]) -> None:
    # RAS names the 3 ranks behind, with 3 lines each (tests/triage_fixtures/ras-behind): the
    # short report keeps 2 a suspect, so one distinct line (the `MISMATCH` summary) is cut.
    case = str(FIXTURES / "ras-behind")
    evidence, _ = _evidence_of(run, case)
    short = run("triage", "nccl", "--no-similar", case).output
    missing = [line for line in evidence if line not in short]
    assert missing, "the fixture no longer has more evidence than the short report keeps"
    assert (f"+{len(missing)} more evidence lines not shown "
            f"({len(evidence) - len(missing)} of {len(evidence)}): rerun `fabtui triage nccl` "
            "with --full to see them all") in short
    full = run("triage", "nccl", "--no-similar", "--full", case)
    assert full.exit_code == 1
    assert all(line in full.output for line in evidence)
    assert "more evidence lines" not in full.output


def test_markdown_says_how_much_evidence_it_left_out_and_full_shows_it(
        run: Callable[..., Result]) -> None:
    # RAS printed the 2 ranks ahead (tests/triage_fixtures/ras-ahead): 30 suspects, 2 lines
    # each; the markdown keeps the first 20 suspects' lines.
    case = str(FIXTURES / "ras-ahead")
    data = json.loads(run("triage", "nccl", "--no-similar", "--json", case).output)
    total = sum(len(s["evidence"]) for s in data["suspects"])
    short = run("triage", "nccl", "--no-similar", "--format", "md", case).output
    shown = short.count("\n- fault ")
    assert 0 < shown < total
    assert (f"*+{total - shown} more evidence lines not shown ({shown} of {total}): "
            "rerun `fabtui triage nccl` with --full to see them all.*") in short
    full = run("triage", "nccl", "--no-similar", "--format", "md", "--full", case).output
    assert full.count("\n- fault ") == total and "more evidence lines" not in full
    last = data["suspects"][-1]
    assert f"- fault {last['fault']}, rank {last['rank']}: " in full
    assert f"- fault {last['fault']}, rank {last['rank']}: " not in short


def _warning_rows(output: str) -> list[str]:
    """The `file:line` of each row of the report's NCCL warnings section (text or markdown):
    the run of rows after its title (and the column headings or blank line under it)."""
    lines = output.split("NCCL warnings (", 1)[1].splitlines()[2:]
    rows = itertools.takewhile(bool, (re.match(r"(?:- `)?(\S+:\d+)", line) for line in lines))
    return [m.group(1) for m in rows if m]


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_warnings_cut_says_how_many_and_full_lists_every_one(
        run: Callable[..., Result], fmt: str) -> None:
    # The real captures of tests/triage_fixtures/real read together: more NCCL warnings than
    # the short report lists.
    case = str(FIXTURES / "real")
    _, warnings = _evidence_of(run, case)
    short = run("triage", "nccl", "--no-similar", "--format", fmt, case).output
    listed = _warning_rows(short)
    assert listed == warnings[:len(listed)] and len(listed) < len(warnings)
    assert (f"+{len(warnings) - len(listed)} more warnings not shown ({len(listed)} of "
            f"{len(warnings)}): rerun `fabtui triage nccl` with --full") in short
    full = run("triage", "nccl", "--no-similar", "--format", fmt, "--full", case).output
    assert _warning_rows(full) == warnings and "more warnings" not in full


def test_the_slow_node_step_names_every_suspect_node_not_only_the_eight_it_runs_on(
        run: Callable[..., Result]) -> None:
    # The real captures read together name ranks on more hosts than the slow-node runbook takes
    # in one run (8): the others must be named, not dropped from the next step.
    case = str(FIXTURES / "real")
    data = json.loads(run("triage", "nccl", "--no-similar", "--json", case).output)
    nodes = sorted({s["node"] for s in data["suspects"] if s["node"]})
    assert len(nodes) > 8
    step = next(line for line in run("triage", "nccl", "--no-similar", case).output.splitlines()
                if line.startswith("next: fabtui runbook run slow-node"))
    assert f"--input job_nodes={','.join(nodes[:8])} " in step
    assert (f"job_nodes holds 8 of the {len(nodes)} suspects' nodes, rerun it with the others: "
            f"{','.join(nodes[8:])}") in step


def test_inputs_with_no_text_are_refused_file_by_file(run: Callable[..., Result],
                                                      tmp_path: Path) -> None:
    """An empty file, an executable and a log left compressed hold nothing to triage: the
    operator learns which file is wrong and why (exit 2), not "the logs do not say which rank
    stopped" about logs never read."""
    import gzip

    empty = tmp_path / "rank0.log"
    empty.write_bytes(b"")
    blank = tmp_path / "rank1.log"
    blank.write_bytes(b"\n  \n")
    program = tmp_path / "rank2.log"
    program.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 40)
    packed = tmp_path / "rank3.log.gz"
    packed.write_bytes(gzip.compress((FIXTURES / "victim-first" / "rank0.log").read_bytes()))
    result = run("triage", "nccl", str(empty))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"{empty}: the input is empty"
    assert "verdict" not in result.stdout
    result = run("triage", "nccl", str(tmp_path))
    assert result.exit_code == 2 and "verdict" not in result.stdout
    assert result.stderr.splitlines() == [
        f"{empty}: the input is empty", f"{blank}: the input is empty",
        f"{program}: not a text log (binary data)",
        f"{packed}: not a text log: gzip data (decompress it first)"]


def test_an_unusable_file_beside_real_logs_keeps_the_verdict(run: Callable[..., Result],
                                                             tmp_path: Path) -> None:
    program = tmp_path / "core"
    program.write_bytes(b"\x00" * 64 + b"not a log")
    result = run("triage", "nccl", "--json", str(FIXTURES / "victim-first"), str(program))
    assert result.exit_code == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["verdict"] == "culprit found"
    assert {"file": str(program), "kind": "unreadable", "ranks": [], "lines": 0,
            "note": "not a text log (binary data)"} in data["sources"]


def test_a_text_log_without_hang_evidence_still_gets_its_verdict(
        run: Callable[..., Result], tmp_path: Path) -> None:
    quiet = tmp_path / "train.log"
    quiet.write_text("step 100 loss 2.31\nstep 200 loss 2.12\n")
    result = run("triage", "nccl", str(quiet))
    assert result.exit_code == 0, result.stderr
    assert "verdict: cannot tell" in result.stdout
