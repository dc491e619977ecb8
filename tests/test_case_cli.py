"""`fabtui cases`: a demo session filed as a draft, matched to past cases, completed, exported,
edited and imported again; searched with filters; bad input is one line and exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.journal.store import Journal, journal_path
from tests.support.case_index_double import engine

pytestmark = pytest.mark.usefixtures("sim_in_process")

OPTIC = """\
---
id: past-optic-rail5
title: All-reduce hang, one rail-5 NIC retry-exceeded, dead optic on the leaf
tags: [nccl, optic]
status: resolved
opened: 2026-02-01
symptom_class: nccl-hang
error_codes: [ib-status-12]
components: [node007:mlx5_5, "leaf-g01-r5:Ethernet4", "optic:MT24000999"]
---

## Symptom
The job hung in all_reduce; the watchdog fired; IBV_WC_RETRY_EXC_ERR on one NIC.

## Root cause
The optic in leaf-g01-r5 Ethernet4 stopped emitting light.

## Resolution
Replaced the optic.
"""
OPEN = """\
---
id: past-hang-open
title: NCCL hang nobody explained
tags: [nccl]
status: unresolved
symptom_class: nccl-hang
error_codes: [ib-status-12]
components: [node009:mlx5_5]
---

## Symptom
All ranks waited in all_reduce until the watchdog fired.

## Root cause

## Resolution
"""
PFC = """\
---
id: past-pfc-storm
title: PFC storm from a stuck receiver
tags: [pfc, roce]
symptom_class: pfc-storm
components: ["leaf-g00-r2:Ethernet3"]
---

## Symptom
Pause frames everywhere, busbw collapsed.

## Root cause
A NIC stuck in pause.

## Resolution
Rebooted the node.
"""
SECRET = "corp-" + "Zq9" * 8


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    cases = tmp_path / "team-cases"
    cases.mkdir()
    for name, text in (("optic", OPTIC), ("open", OPEN), ("pfc", PFC)):
        (cases / f"{name}.md").write_text(text)
    (tmp_path / "config.toml").write_text(
        f'data_dir = "{tmp_path / "data"}"\ncase_dirs = ["{cases}"]\n'
        'redact = ["corp-[A-Za-z0-9]{24}"]\n')
    return tmp_path


@pytest.fixture
def fab(run: Callable[..., Result], workdir: Path,
        monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    monkeypatch.setattr("fabtui.cases.library.default_engine", engine)
    monkeypatch.chdir(workdir)
    return lambda *args: run("--config", str(workdir / "config.toml"), *args)


def _demo_session(fab: Callable[..., Result]) -> str:
    result = fab("--scenario", "nccl-hang", "runbook", "run", "nccl-hang-triage", "--json",
                 "--answer", "cordon=node003", "--answer", "restart=yes")
    assert result.exit_code == 1, result.output  # the run ends on the failed optic check
    session = json.loads(result.stdout)["session"]
    assert isinstance(session, str)
    return session


def test_a_demo_session_files_as_a_draft_that_matches_the_past_optic_case(
        fab: Callable[..., Result], workdir: Path) -> None:
    session = _demo_session(fab)
    # An operator note journaled before the site's redact pattern existed: masked when filed.
    journal = Journal(journal_path(workdir / "data"))
    journal.append(session, "note", data={"text": f"switch password=hunter2 token {SECRET}",
                                          "by": "operator"})
    journal.close()
    filed = fab("cases", "file", session, "--json")
    assert filed.exit_code == 0, filed.output
    draft = json.loads(filed.stdout)
    assert draft["id"] == f"session-{session}" and draft["status"] == "draft"
    assert draft["symptom_class"] == "nccl-hang" and draft["sessions"] == [session]
    assert "ib-status-12" in draft["error_codes"]
    assert {"node003:mlx5_5", "leaf-g00-r5:Ethernet16", "optic:MT24000043"} <= \
        set(draft["components"])
    assert "node001" not in draft["components"]  # where the log was read, not a suspect
    assert {"metric": "rx_power_dbm", "value": "-inf dBm", "source": "switch.dom",
            "component": "leaf-g00-r5:Ethernet16/lane1"} in draft["evidence"]
    assert draft["symptom"].startswith("NCCL job hung: 62 rank(s) timed out")  # its note
    assert draft["runbooks"] == ["nccl-hang-triage", "optic-replacement"]
    assert any("check-the-optic" in line for line in draft["localization"].split("\n"))
    assert draft["timeline"] and draft["root_cause"] == ""
    shown = fab("cases", "show", draft["id"]).stdout
    assert "hunter2" not in shown and SECRET not in shown and "password=***" in shown

    similar = fab("cases", "similar", session, "-n", "50", "--json")
    assert similar.exit_code == 0, similar.output
    found = json.loads(similar.stdout)
    ids = [c["id"] for c in found["cases"]]
    assert "past-optic-rail5" in ids and "past-pfc-storm" not in ids
    assert ids.index("past-optic-rail5") < ids.index("past-hang-open")  # resolved first
    best = next(c for c in found["cases"] if c["id"] == "past-optic-rail5")
    assert best["matched"]["symptom_class"] == ["nccl-hang"]
    assert best["matched"]["error_codes"] == ["ib-status-12"]
    assert best["matched"]["rails"] == ["5"]  # the demo fabric puts mlx5_5 on rail 5
    assert found["commonness"] in ("rare", "frequent") and found["seen"] >= 2


def test_a_session_still_waiting_at_a_gate_files_with_a_note_and_files_again_once_ended(
        fab: Callable[..., Result]) -> None:
    """`cases file` on a session waiting at its cordon gate wrote a draft without a word, its
    help promising "a finished or abandoned session"; the draft could then be completed as
    resolved while the repair was still under way. It says so now, and how to end it; filed
    again once ended, the same draft is updated."""
    waited = fab("--scenario", "nccl-hang", "runbook", "run", "nccl-hang-triage", "--json")
    assert waited.exit_code == 5, waited.output
    session = json.loads(waited.stdout)["session"]
    early = fab("cases", "file", session, "--json")
    assert early.exit_code == 0, early.output
    assert early.stderr.strip() == (
        f"note: session {session} has not ended (waiting): the draft holds it so far; once it "
        f"has ended (`fabtui runbook resume {session}`, or `fabtui runbook abandon {session} "
        "--reason WHY`), file it again to update the draft, and only then complete the case")
    draft = json.loads(early.stdout)
    assert fab("runbook", "abandon", session, "--reason", "cordon refused").exit_code == 0
    again = fab("cases", "file", session, "--json")
    assert again.exit_code == 0 and again.stderr == "", again.output
    updated = json.loads(again.stdout)
    assert updated["id"] == draft["id"] and updated["sessions"] == [session]
    assert "aborted" in json.dumps(updated) and "aborted" not in json.dumps(draft)


def test_a_draft_is_completed_then_edited_through_its_markdown(
        fab: Callable[..., Result], workdir: Path) -> None:
    session = _demo_session(fab)
    case_id = json.loads(fab("cases", "file", session, "--json").stdout)["id"]
    done = fab("cases", "complete", case_id, "--root-cause", "Dead optic MT24000043.",
               "--resolution", "Replaced it.")
    assert done.exit_code == 0 and "resolved" in done.stdout
    refile = fab("cases", "file", session)
    assert refile.exit_code == 2 and "is resolved now" in refile.stderr
    out = workdir / "review"
    assert fab("cases", "export", "-o", str(out), "--id", case_id).exit_code == 0
    path = out / f"{case_id}.md"
    text = path.read_text()
    assert "## Root cause\n\nDead optic MT24000043.\n" in text
    path.write_text(text.replace("Replaced it.", "Replaced it and cleaned the connector."))
    imported = fab("cases", "import", str(path), "--json")
    assert json.loads(imported.stdout)["updated"] == [case_id]
    case = json.loads(fab("cases", "show", case_id, "--json").stdout)
    assert case["resolution"] == "Replaced it and cleaned the connector."
    again = json.loads(fab("cases", "export", "-o", str(out), "--json").stdout)
    # Every other case is written; the edited file already reads as its export would.
    assert again["written"] == len(again["files"]) - 1
    assert path.read_text() == text.replace("Replaced it.",
                                            "Replaced it and cleaned the connector.")


def test_search_filters_and_json(fab: Callable[..., Result]) -> None:
    # The shipped library may hold cases like these too: assertions are about the team's own.
    result = fab("cases", "search", "optic", "hang", "--json")
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert "past-optic-rail5" in [h["id"] for h in hits[:5]]
    assert set(hits[0]) == {"id", "title", "score", "snippet", "matched"}
    one_port = json.loads(fab("cases", "search", "optic", "--component",
                              "leaf-g01-r5:Ethernet4", "--json").stdout)
    assert [h["id"] for h in one_port] == ["past-optic-rail5"]
    only_open = [h["id"] for h in json.loads(fab("cases", "search", "hang", "--status",
                                                 "unresolved", "-n", "50", "--json").stdout)]
    assert "past-hang-open" in only_open and "past-optic-rail5" not in only_open
    text = fab("cases", "search", "pfc", "--tag", "pfc").stdout
    assert "past-pfc-storm" in text and "matched" in text


@pytest.mark.parametrize(("args", "message"), [
    (["cases", "show", "no-such-case"], "fabtui: no case 'no-such-case'"),
    (["cases", "similar", "no-such"], "fabtui: no case 'no-such'"),
    (["cases", "file", "20990101-000000-abcdef"], "fabtui: no session"),
    (["cases", "search", "x", "--since", "2026-13-01"], "fabtui: --since '2026-13-01'"),
    (["cases", "import", "missing.md"], "fabtui: missing.md: no such file or folder"),
    (["cases", "complete", "past-pfc-storm"], "fabtui: complete: give --root-cause"),
], ids=["show", "similar", "file", "since", "import", "complete"])
def test_bad_input_is_one_line_and_exit_2(fab: Callable[..., Result], args: list[str],
                                          message: str) -> None:
    result = fab(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr


def test_a_bad_case_file_is_located_and_the_rest_import(fab: Callable[..., Result],
                                                        workdir: Path) -> None:
    (workdir / "new").mkdir()
    (workdir / "new" / "good.md").write_text(PFC.replace("past-pfc-storm", "new-good"))
    (workdir / "new" / "bad.md").write_text(PFC.replace("symptom_class: pfc-storm",
                                                        "symptom_class: pfc-typhoon"))
    result = fab("cases", "import", "new")
    assert result.exit_code == 2
    assert result.stdout.startswith("1 added, 0 updated, 0 unchanged")
    assert result.stderr.startswith("new/bad.md:5: symptom_class: Input should be")
    assert fab("cases", "show", "new-good").exit_code == 0
    listed = json.loads(fab("cases", "list", "--status", "unresolved", "--json").stdout)
    assert "past-hang-open" in [r["id"] for r in listed]
    assert {r["status"] for r in listed} == {"unresolved"}
    stats = json.loads(fab("cases", "stats", "--json").stdout)
    assert stats["cases"] >= 4 and stats["status"]["unresolved"] >= 1
