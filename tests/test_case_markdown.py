"""Case files: the minimal file imports, Chinese headings read the same, every problem is a
`file:line`, and an export reads back as the same case, byte-stable."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabtui.cases.markdown import _outside_fences, parse_case, write_case
from fabtui.errors import InputError
from fabtui.model.case import (
    ActionItem,
    Case,
    CaseStatus,
    EvidenceRow,
    Severity,
    SymptomClass,
    TimelineEntry,
    TuningAction,
)

MINIMAL = """\
---
id: nccl-hang-optic-rail5
title: NCCL all-reduce hangs at 512 ranks; retry-exceeded on one rail-5 NIC
tags: [nccl-hang, optic, ib-status-12]
---

## Symptom
Training hung at step 1832; the watchdog fired on every rank after 600 s.

## Root cause
The optic on leaf-g00-r5 Ethernet16 (serial MT24000043) died.

## Resolution
Replaced the optic, cleared counters, soaked 30 min.
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(InputError) as caught:
        parse_case(textwrap.dedent(text), "cases/bad.md")
    return [str(p) for p in caught.value.problems]


def test_a_minimal_file_is_a_resolved_english_case() -> None:
    case = parse_case(MINIMAL, "cases/min.md")
    assert case.id == "nccl-hang-optic-rail5" and case.tags == ["nccl-hang", "optic",
                                                                "ib-status-12"]
    assert case.status is CaseStatus.RESOLVED and case.lang == "en"
    assert case.symptom.startswith("Training hung at step 1832")
    assert case.root_cause.endswith("died.") and case.resolution.startswith("Replaced")
    assert case.source == "cases/min.md"


def test_chinese_headings_and_structured_sections_are_read() -> None:
    text = textwrap.dedent("""\
        ---
        id: zh-optic
        title: 光模块误码导致训练变慢
        tags: [光模块, fec]
        opened: 2026-03-02
        severity: sev2
        symptom_class: fec-errors
        environment: {nccl: 2.21, nic: ConnectX-7}
        ---

        # 光模块误码导致训练变慢

        ## 现象
        训练 busbw 从 380 掉到 210。

        ## 指标
        | 组件 | 指标 | 值 | 来源 |
        |---|---|---|---|
        | leaf-g00-r3:Ethernet8 | fec_uncorrectable | 1.2e3/s | switch.fec |

        ## 时间线
        - 2026-03-02T03:10Z busbw 告警
        - 03:40 更换光模块

        ## 根因
        光模块老化。

        ## 解决方案
        更换光模块。

        ## 改进项
        - [ ] 增加 DOM 告警 (负责人: 张三)
        - [x] 备件入库
        """)
    case = parse_case(text, "zh.md")
    assert case.lang == "zh" and case.severity is Severity.SEV2
    assert case.symptom_class is SymptomClass.FEC_ERRORS
    assert case.environment.nccl == "2.21"  # a version, not the number 2.21
    assert case.evidence == [EvidenceRow(component="leaf-g00-r3:Ethernet8",
                                         metric="fec_uncorrectable", value="1.2e3/s",
                                         source="switch.fec")]
    assert case.timeline == [TimelineEntry(at="2026-03-02T03:10Z", text="busbw 告警"),
                             TimelineEntry(at="03:40", text="更换光模块")]
    assert case.action_items == [ActionItem(text="增加 DOM 告警", owner="张三"),
                                 ActionItem(text="备件入库", done=True)]
    assert case.root_cause == "光模块老化。"


@pytest.mark.parametrize(("text", "expected"), [
    ("---\nid: x\ntitle: T\ntags: []\n---\n## Symptom\ns\n## Root casue\nr\n## Resolution\nz\n",
     "cases/bad.md:8: missing section `## Root cause` (is `## Root casue` a misspelling?)"),
    ("---\nid: x\ntitle: T\n---\n## Symptom\ns\n## Root cause\nr\n## Resolution\nz\n",
     "cases/bad.md:1: front matter is missing 'tags'"),
    ("---\nid: x\ntitle: T\ntags: []\nstatus: done\n---\n## Symptom\ns\n## Root cause\nr\n"
     "## Resolution\nz\n", "cases/bad.md:5: status: Input should be 'draft', 'resolved' or "
     "'unresolved'"),
    ("---\nid: x\ntitle: T\ntags: []\nsymptom: s\n---\n## Symptom\ns\n## Root cause\nr\n"
     "## Resolution\nz\n", "cases/bad.md:5: unknown front matter key 'symptom' (write it as "
     "a `## Symptom` section)"),
    ("---\nid: x\ntitle: T\ntags: []\nopened: 2026-13-01\n---\n## Symptom\ns\n## Root cause\n"
     "r\n## Resolution\nz\n", "cases/bad.md:5: opened: '2026-13-01' is not an ISO date"),
    ("---\nid: bad id\ntitle: T\ntags: []\n---\n## Symptom\ns\n## Root cause\nr\n"
     "## Resolution\nz\n", "cases/bad.md:2: id: String should match pattern"),
    ("---\nid: x\ntitle: T\ntags: []\nstatus: resolved\n---\n## Symptom\ns\n## Root cause\n\n"
     "## Resolution\nz\n", "cases/bad.md:9: status is resolved but the root cause is empty"),
    ("---\nid: x\ntitle: T\ntags: []\n---\n## Symptom\ns\n## Symptom\nt\n## Root cause\nr\n"
     "## Resolution\nz\n", "cases/bad.md:8: section `## Symptom` appears twice (first at "
     "line 6)"),
    ("---\nid: x\ntitle: T\ntags: []\n---\n## Symptom\ns\n## Evidence\n"
     "| component | metric | value | source |\n|---|---|---|---|\n| a | b |\n"
     "## Root cause\nr\n## Resolution\nz\n",
     "cases/bad.md:11: table row has 2 cells, expected 4"),
    ("---\nid: [x\n---\n", "cases/bad.md:3: invalid YAML"),
    ("no front matter\n", "cases/bad.md:1: missing front matter"),
    ("---\nid: x\ntitle: T\ntags: []\nenvironment:\n  nccl: 2.21\n  gpuu: H100\n---\n"
     "## Symptom\ns\n## Root cause\nr\n## Resolution\nz\n",
     "cases/bad.md:7: unknown key 'gpuu' in environment (did you mean 'gpu'?)"),
    ("---\nid: x\n", "cases/bad.md:1: front matter is not closed"),
], ids=["misspelt-section", "no-tags", "bad-status", "section-in-front-matter", "bad-date",
        "bad-id", "resolved-without-cause", "twice", "short-row", "yaml", "no-front-matter",
        "environment-typo", "unclosed"])
def test_problems_name_the_file_and_line(text: str, expected: str) -> None:
    problems = _problems(text)
    assert any(p.startswith(expected) for p in problems), problems


def test_every_problem_is_reported_at_once() -> None:
    problems = _problems("---\nid: x\ntitle: T\ntags: []\nstatus: done\nseverity: 9\n---\n"
                         "## Symptom\ns\n## Resolution\nz\n")
    assert [p.split(":")[1] for p in problems] == ["5", "6", "8"], problems


def _full_case() -> Case:
    return Case(
        id="round-trip", title="Rail 3: allreduce slow | busbw 210 (was 380)",
        status=CaseStatus.RESOLVED, severity=Severity.SEV2, opened="2026-03-02T03:10:00Z",
        closed="2026-03-02", lang="en", symptom_class=SymptomClass.BUSBW_LOW,
        error_codes=["xid-79"], components=["node042:mlx5_3", "leaf-g00-r3:Ethernet16",
                                            "rail3", "optic:MT24000043"],
        tags=["busbw", "yes", "2026", "no: colon"], sessions=["20261130-031502-7f3a9c"],
        runbooks=["busbw-low"], authors=["alice"],
        references=["https://github.com/NVIDIA/nccl/issues/1234", "ticket: FAB-12"],
        environment={"gpu": "H100", "nccl": "2.21.5", "scale": "512 GPUs"},
        symptom="busbw dropped.\n\n## not a heading, a line of prose\n\nsee below",
        root_cause="A dirty connector.\n```\n## inside a fence\n```",
        resolution="Cleaned it.", summary="One rail was slow.", impact="3 h of training",
        trigger="a cable move", detection="busbw alert", localization="ib_write_bw per rail",
        environment_notes="The usual pod.",
        evidence=[EvidenceRow(component="leaf-g00-r3:Ethernet16", metric="fec | corrected",
                              value="1e6/s", source="switch.fec")],
        evidence_notes="Log:\n    rx_power -9.1 dBm",
        timeline=[TimelineEntry(at="2026-03-02T03:10Z", text="alert\nsecond line"),
                  TimelineEntry(text="no time here")],
        timeline_notes="All times UTC.",
        tuning=[TuningAction(change="NCCL_IB_QPS_PER_CONNECTION=4", metric="busbw",
                             before="210", after="378")],
        reusable_config="NCCL_IB_QPS_PER_CONNECTION=4", risks="Do not reuse on CX6.",
        action_items=[ActionItem(text="alert on FEC", owner="bob"),
                      ActionItem(text="clean spares", done=True)],
        lessons="Check FEC first.", sections={"Appendix": "kept as written"})


def test_export_reads_back_as_the_same_case_and_is_stable() -> None:
    case = _full_case()
    text = write_case(case)
    again = parse_case(text, "exported/round-trip.md")
    assert again == case.model_copy(update={"source": "exported/round-trip.md"})
    assert write_case(again) == text  # byte-stable: a second export changes nothing


def test_a_chinese_case_exports_with_chinese_headings_and_reads_back() -> None:
    case = _full_case().model_copy(update={"lang": "zh", "symptom": "训练卡住"})
    text = write_case(case)
    assert "\n## 现象\n" in text and "\n## 根因\n" in text and "## Symptom" not in text
    assert parse_case(text, "zh.md") == case.model_copy(update={"source": "zh.md"})


def test_a_draft_exports_with_empty_required_sections_and_reimports() -> None:
    draft = Case(id="session-1", title="draft", symptom="seen")
    text = write_case(draft)
    assert "## Root cause\n" in text and "## Resolution\n" in text
    assert parse_case(text, "d.md").status is CaseStatus.DRAFT


_PROSE = st.lists(st.text(alphabet="ab #|-[]:`~\\*中文", min_size=0, max_size=12),
                  min_size=1, max_size=6).map(
    lambda lines: "\n".join(line.rstrip() for line in lines).strip("\n"))


@settings(max_examples=150, deadline=None)
@given(symptom=_PROSE, cause=_PROSE, lessons=_PROSE)
def test_any_prose_survives_an_export_and_import(symptom: str, cause: str,
                                                 lessons: str) -> None:
    """Headings, escapes, tables and fences in prose are written so they read back as prose,
    and a fence left open cannot swallow the sections after it."""
    case = Case(id="p", title="prose", symptom=symptom, root_cause=cause, lessons=lessons,
                status=CaseStatus.RESOLVED if cause.strip() else CaseStatus.DRAFT)
    again = parse_case(write_case(case), "p.md")
    for name in ("symptom", "root_cause", "lessons"):
        written, read = getattr(case, name), getattr(again, name)
        if _open_fence(written):
            assert read.startswith(written)  # closed on the way out: only a fence added
        else:
            assert read == written, name


def _open_fence(text: str) -> bool:
    return _outside_fences(text, lambda line: line)[1] is not None


def test_every_shipped_case_reads_and_exports_back_as_itself() -> None:
    from fabtui.cases.library import case_files
    from fabtui.cases.markdown import read_case
    from fabtui.paths import shipped_dir

    files = case_files([shipped_dir("cases")])
    if not files:
        pytest.skip("no shipped case files in this tree yet")
    for path in files:
        case, _ = read_case(path, path.name)
        text = write_case(case)
        assert parse_case(text, path.name) == case, path.name
        assert write_case(parse_case(text, path.name)) == text, path.name
