"""The library's index is derived: built when missing, rebuilt when stale or corrupt, updated in
place when it was current; similar cases need a minimum score and say how common a symptom is;
component ids and error codes read as the fabric team writes them; the workspace imports the
configured case folders on first use and again when a file changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.cases.components import component_kind, error_codes_in, normalise_code, placement
from fabtui.cases.document import IndexDoc, SearchFilters
from fabtui.cases.filing import SessionRecord, draft_case
from fabtui.cases.library import CaseLibrary, IndexEngine
from fabtui.cases.similar import MIN_SCORE, Similar
from fabtui.config import load_settings
from fabtui.model.case import Case, CaseStatus, SymptomClass
from fabtui.model.events import Event
from fabtui.workspace import Workspace
from tests.support import case_index_double
from tests.support.case_index_double import CaseIndex

DOUBLE = IndexEngine(index=CaseIndex, doc=IndexDoc, filters=SearchFilters)


def _case(case_id: str, **fields: object) -> Case:
    base: dict[str, object] = {"title": f"case {case_id}", "symptom": "the job hung",
                               "root_cause": "optic", "status": "resolved"}
    base.update(fields)
    return Case.model_validate({"id": case_id, **base})


def test_the_index_is_built_from_the_store_and_follows_every_write(tmp_path: Path) -> None:
    library = CaseLibrary(tmp_path, engine=DOUBLE)
    library.put(_case("a", title="optic died on rail 3"))
    assert not (tmp_path / "case-index").exists()  # nobody searched yet: no index to keep
    builds = CaseIndex.builds
    assert [h.id for h in library.search("optic").hits] == ["a"]
    assert CaseIndex.builds == builds + 1
    library.put(_case("b", title="another optic"))  # the index was current: updated in place
    assert {h.id for h in library.search("optic").hits} == {"a", "b"}
    assert CaseIndex.builds == builds + 1
    other = CaseLibrary(tmp_path, engine=None)  # another process, writing without the index
    other.put(_case("c", title="a third optic"))
    assert {h.id for h in library.search("optic").hits} == {"a", "b", "c"}  # stale: rebuilt
    assert CaseIndex.builds == builds + 2
    (tmp_path / "case-index" / "index.json").write_text("{corrupt")
    assert len(library.search("optic").hits) == 3
    assert CaseIndex.builds == builds + 3
    assert library.reindex() == 3 and CaseIndex.builds == builds + 4
    assert library.delete(["c"]) == ["c"]
    assert {h.id for h in library.search("optic").hits} == {"a", "b"}


def test_search_passes_the_filters(tmp_path: Path) -> None:
    library = CaseLibrary(tmp_path, engine=DOUBLE)
    library.put(_case("r3", components=["leaf-g00-r3:Ethernet8"], severity="sev2"))
    library.put(_case("r5", components=["leaf-g00-r5:Ethernet8"]))
    assert [h.id for h in library.search("hung", rail=3).hits] == ["r3"]
    assert [h.id for h in library.search("hung", severity="sev2").hits] == ["r3"]


def test_similar_needs_a_minimum_score_and_labels_how_common(tmp_path: Path) -> None:
    library = CaseLibrary(tmp_path, engine=None)
    probe = _case("probe", status="draft", root_cause="", symptom_class="gpu-xid",
                  error_codes=["xid-79"], components=["node042:gpu3"])
    library.put(_case("same-node-only", components=["node042"]))
    first = library.similar(probe)
    assert first.cases == [] and first.commonness == "first seen"
    for i in range(RARE := 3):
        library.put(_case(f"xid-{i}", symptom_class="gpu-xid", error_codes=["Xid 79"],
                          opened=f"2026-01-0{i + 1}"))
    found = library.similar(probe)
    # Equal fingerprints: the most recent first.
    assert [c.id for c in found.cases][:RARE] == ["xid-2", "xid-1", "xid-0"]
    assert all(c.score >= MIN_SCORE for c in found.cases)
    assert found.cases[0].matched["error_codes"] == ["xid-79"]
    assert found.commonness == "rare" and found.seen == RARE
    library.put(_case("xid-3", symptom_class="gpu-xid"))
    assert library.similar(probe).commonness == "frequent"
    assert Similar(cases=[], symptom_class="x", seen=0).commonness == "first seen"


def test_component_ids_and_error_codes() -> None:
    assert [component_kind(c) for c in (
        "node042", "node042:gpu3", "node042:mlx5_3", "node042:rank7", "leaf-g00-r3",
        "leaf-g00-r3:Ethernet16", "spine-01", "rail3", "optic:MT24000043",
        "leaf-g00-r3:Ethernet16/lane2")] == [
        "node", "gpu", "nic", "rank", "leaf", "port", "spine", "rail", "optic", "port"]
    assert placement("leaf-g00-r3:Ethernet16").rails == (3,)
    assert placement("node042:mlx5_3").node == "node042"
    assert error_codes_in("NET/IB : Got completion from peer 10.0.0.4 with status=12 "
                          "(IBV_WC_RETRY_EXC_ERR: transport retry counter exceeded)") == \
        ["ib-status-12"]
    assert error_codes_in("NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off "
                          "the bus; later XID 48") == ["xid-79", "xid-48"]
    codes = error_codes_in("with status=12 (IBV_WC_RETRY_EXC_ERR) and Xid 79")
    assert set(codes) == {"ib-status-12", "xid-79"}
    assert normalise_code("XID 79") == normalise_code("xid79") == "xid-79"


def _acceptance_failing(*metrics: str) -> Case:
    rows = [{"name": name, "value": 1.0, "component": "leaf-g00-r3:Ethernet16",
             "verdict": "fail"} for name in metrics]
    events = [
        Event(session="s2", seq=1, at=1_767_000_000.0, kind="session_started",
              data={"runbook": "customer-acceptance"}),
        Event(session="s2", seq=2, at=1_767_000_001.0, kind="block_finished", step="checks",
              block="checks", data={"verdict": "fail", "message": "hand-over FAILS",
                                    "result": {"probe": "switch.dom_all", "metrics": rows}}),
    ]
    return draft_case(SessionRecord(id="s2", runbook="customer-acceptance",
                                    title="Customer acceptance", status="fail",
                                    started_at=1_767_000_000.0, events=events,
                                    tags=["acceptance"]))


def test_a_general_runbook_session_is_classed_by_what_failed_in_it() -> None:
    # An optic that fails DOM also raises BER and drops: the optic is the class, not its effects.
    assert _acceptance_failing("raw_ber", "tx_power_dbm", "rx_discards").symptom_class \
        is SymptomClass.OPTIC_FAILURE
    assert _acceptance_failing("rx_pause_rate").symptom_class is SymptomClass.PFC_STORM
    assert _acceptance_failing("raw_ber").symptom_class is SymptomClass.FEC_ERRORS
    assert _acceptance_failing("active_mtu").symptom_class is SymptomClass.ROCE_CONFIG_MISMATCH
    assert _acceptance_failing("temperature_hours").symptom_class is SymptomClass.OTHER


def test_an_abandoned_session_files_with_what_it_had(tmp_path: Path) -> None:
    events = [
        Event(session="s1", seq=1, at=1_767_000_000.0, kind="session_started",
              data={"runbook": "pfc-storm"}),
        Event(session="s1", seq=2, at=1_767_000_001.0, kind="step_started", step="look",
              data={"title": "Look at pause counters"}),
        Event(session="s1", seq=3, at=1_767_000_002.0, kind="block_finished", step="look",
              block="pfc", data={"verdict": "fail", "message": "pause storm on Ethernet3",
                                 "result": {"probe": "switch.pfc", "target":
                                            "leaf-g00-r2:Ethernet3", "metrics": [
                                                {"name": "rx_pause_rate", "value": 9e5,
                                                 "unit": "/s", "component":
                                                 "leaf-g00-r2:Ethernet3",
                                                 "verdict": "fail"}]}}),
        Event(session="s1", seq=4, at=1_767_000_003.0, kind="session_cancelled",
              data={"reason": "operator went home"}),
    ]
    case = draft_case(SessionRecord(id="s1", runbook="pfc-storm", title="PFC storm",
                                    status="cancelled", started_at=1_767_000_000.0,
                                    events=events, operator="alice"))
    assert case.status is CaseStatus.DRAFT and case.symptom_class is SymptomClass.PFC_STORM
    assert case.components == ["leaf-g00-r2:Ethernet3"] and case.authors == ["alice"]
    assert case.evidence[0].value == "900000.0 /s" and case.evidence[0].source == "switch.pfc"
    assert case.timeline[-1].text == "session cancelled: operator went home"
    assert "ended cancelled" in case.symptom


def test_the_workspace_imports_the_case_folders_on_first_use_and_when_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    text = ("---\nid: team-1\ntitle: Team case\ntags: [x]\n---\n## Symptom\nslow\n"
            "## Root cause\nPFC\n## Resolution\nfixed\n")
    (folder / "team-1.md").write_text(text)
    (folder / "broken.md").write_text("no front matter\n")
    config = tmp_path / "config.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\ncase_dirs = ["{folder}"]\n')
    monkeypatch.setattr("fabtui.cases.library.default_engine", case_index_double.engine)
    told: list[str] = []
    with Workspace(load_settings(config), notice=told.append) as ws:
        assert ws.cases.get("team-1").root_cause == "PFC"
        assert ws.case_sync is not None and "team-1" in ws.case_sync.added
    assert told and "broken.md:1: missing front matter" in told[0]
    (folder / "team-1.md").write_text(text.replace("fixed", "fixed for good"))
    with Workspace(load_settings(config)) as ws:
        assert ws.cases.get("team-1").resolution == "fixed for good"
        assert ws.case_sync is not None and ws.case_sync.updated == ["team-1"]
        ws.cases.put(Case(id="filed-here", title="filed", symptom="x"))
    (folder / "team-1.md").unlink()  # the file was the case's truth: it goes with it
    with Workspace(load_settings(config)) as ws:
        assert ws.cases.store.get("team-1") is None and ws.cases.store.get("filed-here")
        assert ws.case_sync is not None and ws.case_sync.removed == ["team-1"]
