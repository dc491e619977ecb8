"""How a triage report reads on screen: the verdict, a suspect with its evidence, the evidence
chain (each link's status as a glyph and a word, never colour alone) and the similar cases.

Pure functions of the report, so they are tested without an app.
"""

from __future__ import annotations

from rich.text import Text

from fabtui.model.chain import EvidenceChain
from fabtui.model.table import left, right
from fabtui.model.triage import Evidence, Suspect, TriageReport
from fabtui.topology.ranks import compact_ranges

CHAIN_GLYPHS = {"confirmed": "●", "contradicted": "○", "unknown": "?"}
"""A chain link's status: the fault shows at that layer, the probe looked and it does not,
nobody could look."""
ASCII_CHAIN_GLYPHS = {"confirmed": "*", "contradicted": "o", "unknown": "?"}
_CHAIN_STYLE = {"confirmed": "bold red", "contradicted": "green", "unknown": "dim"}
EVIDENCE_LINES = 3
"""Evidence lines shown per suspect (the first is the strongest)."""


def where(suspect: Suspect) -> str:
    """The rank(s) a suspect stands for, as a cell."""
    if suspect.rank is not None:
        return str(suspect.rank)
    if suspect.ranks:
        return compact_ranges(suspect.ranks)
    if suspect.pg_rank is not None:
        return f"pg {suspect.pg_rank}"
    return "-"


def suspect_row(suspect: Suspect) -> tuple[str, ...]:
    """One line of the suspects table: fault, kind, rank, node, gpu, NIC, leaf port, optic."""
    return (str(suspect.fault), suspect.kind, where(suspect), suspect.node or "-",
            "-" if suspect.gpu is None else str(suspect.gpu), suspect.nic or "-",
            suspect.port or suspect.switch or "-", suspect.optic or "-")


SUSPECT_COLUMNS = ("fault", "kind", "rank", "node", "gpu", "nic", "leaf port", "optic")
SUSPECT_FIT = (left("fault"), left("kind"), right("rank"), right("node"), right("gpu"),
               right("nic"), right("leaf port"), right("optic"))
"""The same columns for `fit_data_table`: the names an operator acts on are kept whole."""


def verdict_text(report: TriageReport, chain: Text | None = None) -> Text:
    """The verdict, the culprit, the collective, then `chain` (a `chain_strip`) and the
    summary, for the top of the screen."""
    text = Text()
    text.append(f"verdict: {report.verdict}", "bold")
    culprit = report.suspects[0] if report.suspects else None
    if culprit is not None:
        text.append(f" · culprit rank {where(culprit)}"
                    + "".join(f" {part}" for part in (culprit.node, culprit.nic, culprit.port,
                                                       culprit.optic and f"optic "
                                                       f"{culprit.optic}") if part), "bold")
    if report.collective is not None and report.collective.op:
        c = report.collective
        text.append(f" · {c.op} seq {c.seq if c.seq is not None else '?'}", "dim")
    if chain is not None:
        text.append("\n")
        text.append_text(chain)
    text.append(f"\n{report.summary}")
    return text


def suspect_text(report: TriageReport, suspect: Suspect | None) -> Text:
    """The selected suspect: where it is, why, the peer, the lines that say so."""
    text = Text()
    if suspect is None:
        text.append("no suspects: the logs name no rank, NIC or link.\n", "dim")
    else:
        text.append(f"{suspect.kind} · rank {where(suspect)}", "bold")
        place = [p for p in (suspect.node, suspect.nic and f"NIC {suspect.nic}",
                             suspect.rail is not None and f"rail {suspect.rail}",
                             suspect.port and f"leaf port {suspect.port}",
                             suspect.switch and f"switch {suspect.switch}",
                             suspect.optic and f"optic {suspect.optic}") if p]
        if place:
            text.append(" · " + " · ".join(str(p) for p in place))
        text.append(f"\n{suspect.reason}\n")
        if suspect.peer or suspect.peer_node:
            text.append("peer: ", "dim")
            text.append(" ".join(p for p in (suspect.peer_node, suspect.peer and
                                             f"({suspect.peer})", suspect.peer_port and
                                             f"-> {suspect.peer_port}") if p) + "\n")
        _evidence(text, suspect.evidence[:EVIDENCE_LINES])
        if len(suspect.evidence) > EVIDENCE_LINES:
            text.append(f"  +{len(suspect.evidence) - EVIDENCE_LINES} more evidence lines "
                        "(under the chain)\n", "dim")
    return text


def more_evidence_text(suspect: Suspect | None) -> Text:
    """The suspect's evidence lines past the first `EVIDENCE_LINES`, for the end of the detail
    pane (they were left out without a word)."""
    text = Text()
    if suspect is not None and len(suspect.evidence) > EVIDENCE_LINES:
        text.append(f"more evidence for this suspect "
                    f"({len(suspect.evidence) - EVIDENCE_LINES}):\n", "bold")
        _evidence(text, suspect.evidence[EVIDENCE_LINES:])
    return text


def _evidence(text: Text, lines: list[Evidence]) -> None:
    for evidence in lines:
        text.append("  " + (f"{evidence.file}:{evidence.line}" if evidence.line is not None
                            else evidence.file), "dim")
        text.append(f"  {evidence.text}\n")


def notes_text(report: TriageReport) -> Text:
    """What a naive reading of these logs gets wrong, and what they cannot say."""
    text = Text()
    for note in report.notes:
        text.append(f"note: {note}\n", "italic")
    return text


def chain_text(chain: EvidenceChain | None, state: str, ascii_only: bool = False) -> Text:
    """The evidence chain, one line per layer (glyph, status, layer, why, probe), or `state`
    (`probing ...`, why there is none) while there is no chain."""
    text = Text()
    if chain is None:
        text.append(f"evidence chain: {state}\n", "dim")
        return text
    glyphs = ASCII_CHAIN_GLYPHS if ascii_only else CHAIN_GLYPHS
    head = f"evidence chain for {chain.node}" + (f" {chain.nic}" if chain.nic else "") + \
        (f" -> {chain.port}" if chain.port else "")
    text.append(head + "\n", "bold")
    for link in chain.links:
        text.append(f" {glyphs[link.status]} {link.status:<12}", _CHAIN_STYLE[link.status])
        text.append(f" {link.layer:<6} ", "bold")
        text.append(link.reason)
        if link.probe:
            text.append(f"  [{link.probe} {link.target}]", "dim")
        text.append("\n")
    text.append(f" => {chain.summary}\n")
    return text


def chain_strip(chain: EvidenceChain | None, state: str, ascii_only: bool = False) -> Text:
    """The chain in one line, top layer to bottom (`chain: ? job ● busbw ... ● optic`), for
    the top of the screen where the whole chain does not fit."""
    text = Text("chain: ", "dim")
    if chain is None:
        text.append(state, "dim")
        return text
    glyphs = ASCII_CHAIN_GLYPHS if ascii_only else CHAIN_GLYPHS
    for link in chain.links:
        text.append(f"{glyphs[link.status]} {link.layer}  ", _CHAIN_STYLE[link.status])
    if chain.deepest:
        text.append(f"deepest confirmed: {chain.deepest}", "bold")
    return text


def chain_legend(ascii_only: bool = False) -> str:
    glyphs = ASCII_CHAIN_GLYPHS if ascii_only else CHAIN_GLYPHS
    return "  ".join(f"{glyph} {status}" for status, glyph in glyphs.items())
