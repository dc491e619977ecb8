"""Alertmanager's alerts joined to the rest of the workspace (issue 40): the incident book on
this fabric and label mapping, what each incident says beyond its alerts (blast radius, the
runbook to run, similar past cases, the jobs and ranks behind the suspect), and silences
applied through the typed gate.

`Workspace.alerts` is the door (one book per workspace, its journal `alerts.sqlite` in the data
folder beside the runbook journal); `Receiver.receive(body)` is what the receiver's HTTP
handler and the tests call; `close_incident` is the one way an operator closes an incident (CLI
and app); `apply_silences` is the one way a silence reaches an Alertmanager.

Side effects: writes the alerts journal; reads the case library; `apply_silences` POSTs to
Alertmanager's API.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fabtui.alerts.grouping import Jobs, spans
from fabtui.alerts.incidents import UNMAPPED, AlertRecord, Context, Incident, IncidentBook, Receipt
from fabtui.alerts.locate import Locator
from fabtui.alerts.payload import PayloadError, parse_notification
from fabtui.alerts.silence import gate_phrase, suggest
from fabtui.errors import RequestError
from fabtui.model.case import Case, CaseStatus, SymptomClass
from fabtui.model.topology import FabricKind
from fabtui.prom.labels import LabelMap

if TYPE_CHECKING:
    from fabtui.cases.library import CaseLibrary
    from fabtui.config import Settings
    from fabtui.probes.runner import Transports
    from fabtui.runbooks.library import Library
    from fabtui.topology.graph import FabricGraph
    from fabtui.topology.loader import LoadedTopology
    from fabtui.topology.ranks import RankSlot


FOUND_RUNBOOK_SCORE = 1.5
"""The least `runbook find` score taken as an alert's runbook when its rule names none: the
demo's clear symptoms score 1.9-2.3 (`FabricOpticRxPowerLow` -> optic-replacement 2.31), a
vague one under 1.3 (`exporter down` -> major-incident 0.77), which is no answer."""


def _words(name: str) -> str:
    """An alert's name as words: `FabricOpticRxPowerLow` -> `Fabric Optic Rx Power Low`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|_", " ", name)


class Workspace(Protocol):
    """What this module uses of `fabtui.workspace.core.Workspace` (named here, not imported:
    the workspace imports this module)."""

    settings: Settings
    job_slots: tuple[RankSlot, ...] | None

    def graph(self) -> FabricGraph: ...

    def topology(self) -> LoadedTopology: ...

    def simulated(self) -> bool: ...

    def transports(self) -> Transports: ...

    @property
    def library(self) -> Library: ...

    @property
    def cases(self) -> CaseLibrary: ...

    @property
    def alerts(self) -> IncidentBook: ...

CLASS_OF_FAULT = {"pfc-storm": SymptomClass.PFC_STORM,
                  "pause-spreading": SymptomClass.PFC_STORM,
                  "link-down": SymptomClass.LINK_FLAP, "link-flap": SymptomClass.LINK_FLAP,
                  "fec": SymptomClass.FEC_ERRORS, "optic": SymptomClass.OPTIC_FAILURE,
                  "gpu-xid": SymptomClass.GPU_XID, "rdma-loss": SymptomClass.PORT_DROPS,
                  "congestion": SymptomClass.MULTI_JOB_INTERFERENCE}
"""The case library's symptom class of each rule-pack fault (`fabtui_fault`)."""
SHOWN_NODES = 16


def alerts_journal_path(data_dir: Path) -> Path:
    """Where the incidents live in a data folder (beside `journal.sqlite`)."""
    return data_dir / "alerts.sqlite"


def label_map(ws: Workspace) -> LabelMap:
    """The configured label mapping (`[prometheus.labels]`), the exporters' defaults without
    one."""
    prom = ws.settings.prometheus
    return LabelMap(**dict(prom.labels)) if prom is not None else LabelMap()


def open_book(ws: Workspace) -> IncidentBook:
    """The incident book of this workspace's fabric (opens, or creates, the alerts journal)."""
    from fabtui.journal.store import Journal

    jobs = JobsSource(lambda: _running(ws))
    return IncidentBook(Journal(alerts_journal_path(ws.settings.data_dir)),
                        Locator(ws.graph(), label_map(ws)), enrich=Enricher(ws, jobs),
                        jobs=jobs)


def _running(ws: Workspace) -> Jobs:
    from fabtui.workspace.slurm import running_jobs

    found = running_jobs(ws)
    return Jobs(found.ranks, found.source, found.names)


class JobsSource:
    """The running jobs, asked of Slurm at most every `ttl_s`: a notification does not wait on
    Slurm (a job starts or ends far less often than alerts arrive). The first call waits for
    the first answer (`warm()` asks ahead, as `fabtui alerts serve` does when it starts); a
    later call past `ttl_s` gets the jobs known and asks again in a thread. None when Slurm
    cannot be asked: `note` says why (the receiver logs it), and alerts then group by fabric
    elements only."""

    def __init__(self, ask: Callable[[], Jobs], ttl_s: float = 30.0) -> None:
        self.ask = ask
        self.ttl_s = ttl_s
        self.note = ""
        self._jobs: Jobs | None = None
        self._at: float | None = None
        self._asking = False
        self._first = threading.Event()
        self._lock = threading.Lock()

    def __call__(self) -> Jobs | None:
        with self._lock:
            first = self._at is None
            stale = not first and time.monotonic() - (self._at or 0.0) >= self.ttl_s
            start = (first or stale) and not self._asking
            if start:
                self._asking = True
        if start and first:
            self._refresh()
        elif start:
            threading.Thread(target=self._refresh, daemon=True, name="slurm-jobs").start()
        elif first:
            self._first.wait(timeout=60.0)  # another thread's first question
        return self._jobs

    def warm(self) -> None:
        """Ask now, in a thread, unless asked already."""
        with self._lock:
            if self._at is not None or self._asking:
                return
            self._asking = True
        threading.Thread(target=self._refresh, daemon=True, name="slurm-jobs").start()

    def _refresh(self) -> None:
        try:
            jobs, note = self.ask(), ""
        except Exception as exc:  # a thread's answer: said in `note`, never lost
            jobs, note = None, f"running jobs unknown, alerts not grouped by job: {exc}"
        with self._lock:
            self._jobs, self.note, self._at, self._asking = jobs, note, time.monotonic(), False
        self._first.set()


class Enricher:
    """What an incident says about its suspect (see the module docstring)."""

    def __init__(self, ws: Workspace, jobs: Callable[[], Jobs | None] | None = None) -> None:
        self.ws = ws
        self.jobs = jobs

    def __call__(self, suspect: str, kind: str, alerts: list[AlertRecord]) -> Context:
        if kind == UNMAPPED:
            return Context()
        if kind in ("job", "rail"):  # no one element: what its alerts name stands in
            nodes = list(dict.fromkeys(a.element.split(":", 1)[0] for a in alerts
                                       if a.element))
            return Context(blast={}, runbook=self.runbook(alerts),
                           similar=self.similar(alerts[0].element if alerts else suspect,
                                                alerts),
                           impact=self.jobs_on(nodes))
        return Context(blast=self.blast(suspect), runbook=self.runbook(alerts),
                       similar=self.similar(suspect, alerts),
                       impact=self.impact(suspect))

    def jobs_on(self, nodes: list[str]) -> list[str]:
        """One line per running job on `nodes` (Slurm's, `JobsSource`): its ranks there."""
        found = self.jobs() if self.jobs is not None else None
        if found is None:
            return []
        lines = []
        for job in sorted({j for n in nodes for j in found.on(n)}):
            mine = [n for n in nodes if n in found.ranks[job]]
            name = found.names.get(job)
            more = f" (+{len(mine) - 8} node(s))" if len(mine) > 8 else ""
            lines.append(f"job {job}{f' ({name})' if name else ''}: "
                         f"{found.placement(job, mine[:8])}{more}")
        return lines

    def blast(self, suspect: str) -> dict[str, Any]:
        """`topo blast SUSPECT`, summarised ({} when the topology cannot place it)."""
        from fabtui.topology.blast import UnknownComponent, blast_radius

        try:
            radius = blast_radius(self.ws.graph(), suspect)
        except UnknownComponent:
            return {}
        return {"component": radius.component, "kind": radius.kind,
                "links_down": [str(link) for link in radius.links_down],
                "switches_down": radius.switches_down,
                "nodes": [n.model_dump() for n in radius.nodes[:SHOWN_NODES]],
                "nodes_affected": len(radius.nodes), "ranks_affected": len(radius.ranks),
                "rails": [r.model_dump() for r in radius.rails], "notes": radius.notes}

    def runbook(self, alerts: list[AlertRecord]) -> str | None:
        """The runbook the cause alerts name most (annotation `runbook`), if the library has
        it; for alerts of another rule pack, which name none, the library's best match for
        their names and summaries (as `fabtui runbook find` ranks it), when it is a clear one
        and meant for this fabric's kind."""
        named = Counter(a.runbook for a in alerts if a.runbook and a.role == "cause") or \
            Counter(a.runbook for a in alerts if a.runbook)
        try:
            library = self.ws.library
            known = set(library.runbooks)
        except (RequestError, OSError):
            return None
        for name, _ in named.most_common():
            if name in known:
                return name
        if named:
            return None
        from fabtui.runbooks.library import match  # the library's parser, only when asked

        causes = [a for a in alerts if a.role == "cause"] or alerts
        text = " ".join(f"{_words(a.name)} {a.summary}" for a in causes)
        infiniband = self.ws.graph().topology.cluster.fabric is FabricKind.INFINIBAND
        for score, book in match(library, text, limit=5):
            if score < FOUND_RUNBOOK_SCORE:
                break
            if ("infiniband" in book.meta.tags) is infiniband:
                return book.meta.id
        return None

    def similar(self, suspect: str, alerts: list[AlertRecord], limit: int = 3) -> list[str]:
        """Ids of the past cases most like this incident ([] when the library cannot say)."""
        faults = Counter(a.fault for a in alerts if a.fault and a.role == "cause") or \
            Counter(a.fault for a in alerts if a.fault)
        fault = faults.most_common(1)[0][0] if faults else ""
        graph = self.ws.graph()
        components = [suspect]
        optic = graph.optic_at(suspect) if ":" in suspect else None
        if optic:
            components.append(f"optic:{optic}")
        device = suspect.split(":", 1)[0]
        if device != suspect:
            components.append(device)
        names = sorted({a.name for a in alerts})
        draft = Case(id="alert-draft", title=f"{suspect}: {', '.join(names[:3])}",
                     status=CaseStatus.DRAFT,
                     symptom_class=CLASS_OF_FAULT.get(fault, SymptomClass.OTHER),
                     components=components, symptom="; ".join(a.summary for a in alerts[:5]),
                     tags=sorted({a.fault for a in alerts if a.fault}))
        try:
            return [hit.id for hit in self.ws.cases.similar(draft, limit=limit).cases]
        except (RequestError, OSError, ValueError):
            return []

    def impact(self, suspect: str) -> list[str]:
        """The ranks behind the suspect (by the workspace's placement: a followed Slurm job,
        a rank file, or 8 per node), one line per node."""
        from fabtui.topology.blast import UnknownComponent, blast_radius

        try:
            radius = blast_radius(self.ws.graph(), suspect)
        except UnknownComponent:
            return []
        by_node: dict[str, list[int]] = {}
        for rank in radius.ranks:
            by_node.setdefault(rank.node, []).append(rank.rank)
        placed = "the followed Slurm job" if self.ws.job_slots is not None else \
            "the rank file" if self.ws.settings.ranks else "8 ranks per node (no job followed)"
        lines = [f"{node}: ranks {spans(ranks)}" for node, ranks in by_node.items()]
        jobs = self.jobs_on([n.node for n in radius.nodes])
        return ([f"placement: {placed}", *lines] if lines else []) + jobs


class Receiver:
    """The receiver's side of the workspace: one book, one notification at a time."""

    def __init__(self, ws: Workspace, log: Callable[[str], None]) -> None:
        self.ws = ws
        self.log = log
        self.book = ws.alerts  # the workspace's one book: silences applied here land in it
        self._lock = threading.Lock()
        self.listeners: list[Callable[[Receipt], None]] = []
        self._jobs_note = ""

    def warm(self) -> None:
        """Ask Slurm for the running jobs ahead of the first notification (in a thread)."""
        jobs = self.book.jobs
        if isinstance(jobs, JobsSource):
            jobs.warm()

    def receive(self, body: bytes, peer: str = "") -> tuple[int, str]:
        """(HTTP status, message) for one POSTed body: 200 once its incidents are journaled,
        400 for a body that is no notification (Alertmanager does not retry it), 500 when it
        could not be recorded (Alertmanager retries)."""
        where = f" from {peer}" if peer else ""
        try:
            notification = parse_notification(body)
        except PayloadError as exc:
            self.log(f"rejected a notification{where}: {exc}")
            return 400, str(exc)
        try:
            with self._lock:
                if self.book.sync():  # an incident closed by hand in another process
                    self.log("the alerts journal changed in another process: read it again")
                receipt = self.book.receive(notification)
        except Exception as exc:
            self.log(f"could not record a notification{where} ({type(exc).__name__}: {exc}); "
                     "Alertmanager will send it again")
            return 500, "not recorded; send again"
        for note in receipt.notes:
            self.log(f"notification{where}: {note}")
        jobs = self.book.jobs
        note = jobs.note if isinstance(jobs, JobsSource) else ""
        if note != self._jobs_note:  # said once, and once again when it changes
            self._jobs_note = note
            self.log(note or "running jobs known again: symptoms group by job")
        self.log(f"notification{where}: {receipt.line()}")
        for listener in list(self.listeners):
            listener(receipt)
        return 200, receipt.line()


def find_incident(book: IncidentBook, name: str) -> Incident:
    """The incident `name` (its id, or a unique prefix of it). Raises `RequestError`."""
    if name in book.incidents:
        return book.incidents[name]
    found = [i for i in book.incidents.values() if i.id.startswith(name)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise RequestError(f"no incident {name!r} in the alerts journal (`fabtui alerts list`)")
    raise RequestError(f"{name!r} matches {len(found)} incidents; give more of the id")


def close_incident(ws: Workspace, name: str, reason: str, operator: str) -> Incident:
    """Close the open incident `name` (id or unique prefix) by hand: journaled with `reason`
    (required) and `operator`; it leaves the open list, and a resolved alert does not reopen
    it, only one that fires again (`IncidentBook.close`). Raises `RequestError`."""
    book = ws.alerts
    book.sync()
    incident = find_incident(book, name)
    if not reason.strip():
        raise RequestError(f"say why {incident.id} is closed: --reason \"...\" (journaled "
                           "with who closed it)")
    try:
        return book.close(incident.id, reason, operator)
    except ValueError as exc:
        raise RequestError(str(exc)) from None


def apply_silences(ws: Workspace, incident: Incident, typed: str | None, *, author: str,
                   alertmanager: str | None = None, duration_s: float = 7200.0,
                   timeout: float = 10.0) -> list[str]:
    """Send the incident's suggested silences to Alertmanager once `typed` is the gate phrase
    (the suspect element); journal the request before sending and the ids (or the failure)
    after. Returns the silence ids. Raises `RequestError` (gate not passed, nothing to silence,
    no Alertmanager known, Alertmanager refused)."""
    phrase = gate_phrase(incident)
    if typed is None or typed.strip() != phrase:
        raise RequestError(f"silences for {incident.id} not applied: type the suspect "
                           f"{phrase!r} to apply them (they hide alerts, they fix nothing)")
    specs = suggest(incident, duration_s)
    if not specs:
        raise RequestError(f"{incident.id} has no firing alert to silence")
    url = (alertmanager or incident.alertmanager).rstrip("/")
    if not url:
        raise RequestError("no Alertmanager URL: give --alertmanager URL (the incident's "
                           "alerts did not say which Alertmanager sent them)")
    book = ws.alerts
    bodies = [spec.body(author) for spec in specs]
    record = {"silences": bodies, "operator": author, "alertmanager": url}
    book.record(incident.id, "silence_requested", record)
    ids: list[str] = []
    try:
        for body in bodies:
            ids.append(_post_silence(url, body, timeout))
    except RequestError as exc:
        book.record(incident.id, "silence_failed", {**record, "reason": str(exc), "ids": ids})
        raise
    book.record(incident.id, "silence_applied", {**record, "ids": ids})
    return ids


def _post_silence(url: str, body: dict[str, Any], timeout: float) -> str:
    request = urllib.request.Request(f"{url}/api/v2/silences", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"},
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return str(json.load(answer).get("silenceID", ""))
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:200]
        raise RequestError(f"{url} refused the silence: HTTP {exc.code} {detail}") from None
    except (OSError, ValueError) as exc:
        raise RequestError(f"{url}: cannot reach Alertmanager ({exc})") from None
