"""The workspace: one working session's fabric, transports, catalogs and journal, built once from
the settings and asked the same way by every face (the command line and the app): the one door,
which carries the rules that keep users safe so that no face can forget one.

Everything is built lazily, on first use: `fabtui parse` never loads the topology, `runbook list`
never opens the journal. The rules live here, once:

- placement: one rank-aware fabric graph (a rank file given or configured, or a followed Slurm
  job) answers topology queries, probe targets, runbook functions and triage alike;
- danger: a dangerous probe runs only with its typed phrase (`run_probe` / `sweep(confirmed=)`,
  enforced by the probe runner);
- transports: the simulated fabric when the settings say so and the configured topology is in use,
  real ones otherwise;
- runbooks: a broken runbook (lint errors) is refused before it runs; a gate not passed leaves
  its session waiting there, and only `abandon` (with a reason) ends one; resume refuses a
  finished session, notes a changed file, asks again for every secret (runbook inputs and `input`
  blocks: never replayed from the journal) and restores a dry run;
- the journal is opened once and closed by `close()` (or leaving a `with` block);
- the case library (`cases`) lives beside the journal in the data folder; the configured case
  folders (the shipped `cases/` among them) are imported on first use, and again when changed.

A workspace may be asked from several threads (the app's workers): its lazy builds (topology,
graphs, catalogs, journal; the case library under a lock of its own, as its first sync is slow)
happen once, whoever asks first. What
they build guards itself (the journal has a connection per thread, the case library a lock).
"""

from __future__ import annotations

import contextlib
import difflib
import threading
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from fabtui.config import Settings
from fabtui.errors import InputError, RequestError

if TYPE_CHECKING:
    from fabtui.alerts.incidents import IncidentBook
    from fabtui.cases.components import Locate
    from fabtui.cases.filing import SessionRecord
    from fabtui.cases.library import CaseLibrary
    from fabtui.cases.store import ImportReport
    from fabtui.intent.baseline import Baseline, Change, Judgement
    from fabtui.intent.drift import DriftReport
    from fabtui.intent.render import Rendered
    from fabtui.intent.selection import FleetReport
    from fabtui.journal.store import Journal
    from fabtui.model.cabling import CablingReport
    from fabtui.model.case import Case
    from fabtui.model.chain import EvidenceChain
    from fabtui.model.events import Event
    from fabtui.model.probe import ProbeDef, ProbeResult
    from fabtui.model.runbook import Runbook, SessionInfo
    from fabtui.model.scheduler import SchedulerAudit
    from fabtui.model.slowjob import SlowJobReport
    from fabtui.model.topology import Topology
    from fabtui.model.triage import Suspect, TriageReport
    from fabtui.probes.runner import ProbeRunner, Transports
    from fabtui.probes.targets import ProbeTarget
    from fabtui.runbooks.engine import Engine, Observer, Operator, RunSummary
    from fabtui.runbooks.library import Library
    from fabtui.runbooks.lint import LintIssue
    from fabtui.runbooks.resume import AskAgain
    from fabtui.runbooks.testing import TestOutcome
    from fabtui.topology.graph import FabricGraph
    from fabtui.topology.loader import LoadedTopology
    from fabtui.topology.ranks import RankSlot
    from fabtui.workspace.netbox import ExportResult


@dataclass
class Resumed:
    """A session taken up again: its engine, and what the operator should be told first."""

    engine: Engine
    notes: list[str] = field(default_factory=list)


class Workspace:
    """A working session over one fabric (see the module docstring)."""

    def __init__(self, settings: Settings, notice: Callable[[str], None] | None = None) -> None:
        """`notice(line)` is how this face tells its user something beside a result (that the
        demo fabric plays a fault scenario, say); None: nobody is told."""
        self.settings = settings
        self.notice = notice
        self._build = threading.RLock()
        """Held while something is built on first use (see the module docstring)."""
        self._build_cases = threading.RLock()
        """Held while the case library is opened and synced, which can take seconds: apart,
        so that a face asking for the catalog or the graph meanwhile is not held up."""
        self._catalog: dict[str, ProbeDef] | None = None
        self._library: Library | None = None
        self._scenarios: list[str] | None = None
        self._journal: Journal | None = None
        self._alerts: IncidentBook | None = None
        self._cases: CaseLibrary | None = None
        self.case_sync: ImportReport | None = None
        """What importing the case folders did when the library was first used."""
        self._loaded: dict[Path, LoadedTopology] = {}
        self._graphs: dict[tuple[Path, Path | None], FabricGraph] = {}
        self.job_slots: tuple[RankSlot, ...] | None = None
        """The rank placement of the Slurm job this session follows (set by
        `fabtui.workspace.slurm.follow_job`), if any."""
        self._job_graphs: dict[tuple[Path, tuple[RankSlot, ...]], FabricGraph] = {}

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the journal, if it was opened. The workspace can be used again afterwards."""
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        if self._alerts is not None:
            self._alerts.journal.close()
            self._alerts = None
        if self._cases is not None:
            self._cases.close()
            self._cases = None

    # the fabric -------------------------------------------------------------------------------
    def topology(self, path: Path | None = None) -> LoadedTopology:
        """The topology file `path` read (default: the configured one), read once."""
        from fabtui.paths import display_path
        from fabtui.topology.loader import load_topology

        chosen = path or self.settings.topology
        with self._build:
            if chosen not in self._loaded:
                self._loaded[chosen] = load_topology(chosen, label=display_path(chosen),
                                                     find_template=self.settings.find_template)
            return self._loaded[chosen]

    def graph(self, path: Path | None = None, ranks: Path | None = None) -> FabricGraph:
        """The fabric graph with the job's rank placement: the one placement function.

        `ranks` (default: the followed Slurm job's placement, see `workspace.slurm.follow_job`,
        else the configured rank file; none: 8 ranks per node in node order) places ranks for
        topology queries, probe targets (`rank:N`), runbook functions (`node_of_rank`) and
        triage alike.
        """
        from fabtui.paths import display_path
        from fabtui.topology.graph import FabricGraph
        from fabtui.topology.ranks import parse_rankfile

        chosen = path or self.settings.topology
        job_slots = self.job_slots
        with self._build:
            if ranks is None and job_slots is not None:
                job_key = (chosen, job_slots)
                if job_key not in self._job_graphs:
                    self._job_graphs[job_key] = FabricGraph(self.topology(chosen).topology,
                                                            list(job_slots))
                return self._job_graphs[job_key]
            rank_file = ranks or self.settings.ranks
            key = (chosen, rank_file)
            if key not in self._graphs:
                loaded = self.topology(chosen)
                slots = parse_rankfile(rank_file, loaded.topology, display_path(rank_file)) \
                    if rank_file else None
                self._graphs[key] = FabricGraph(loaded.topology, slots)
            return self._graphs[key]

    def placement_known(self, ranks: Path | None = None) -> bool:
        """True when ranks are placed by what the operator said (`ranks`, a followed Slurm
        job, or the configured rank file) rather than the default of 8 ranks per node in node
        order: triage then trusts the placement over the host names in the logs."""
        return ranks is not None or self.job_slots is not None or \
            self.settings.ranks is not None

    def triage(self, paths: Sequence[Path], *, ranks: Path | None = None,
               topology: Path | None = None, similar: bool = True,
               world_size: int | None = None) -> TriageReport:
        """`fabtui triage nccl PATHS` on this fabric: the report, its suspects placed by the one
        placement rule (`ranks`, else the followed Slurm job, else the configured rank file:
        `graph`, `placement_known`), and (`similar`) the past cases like it. `world_size` is the
        job's size as the operator gives it (else what the logs say; a Slurm job's task count is
        not used: its tasks need not all be ranks of the hung communicator). Raises
        `InputError` for an input that cannot be read. Reads the inputs; opens the case
        library."""
        from fabtui.triage import triage_paths

        world = (world_size, "--world-size") if world_size is not None else None
        report = triage_paths(list(paths), self.graph(topology, ranks),
                              self.placement_known(ranks), world=world)
        if similar and report.suspects:
            report.similar_cases = self.similar_cases(report)
        return report

    def similar_cases(self, report: TriageReport, limit: int = 3) -> list[str]:
        """Ids of the past cases most like this hang, best first ([] when the case library
        cannot be opened or nothing matches)."""
        from fabtui.workspace.triaging import similar_cases

        try:
            library = self.cases
        except (RequestError, OSError):
            return []
        return similar_cases(library, report, limit)

    async def evidence_chain(self, report: TriageReport, *, suspect: Suspect | None = None,
                             timeout: float = 120.0) -> EvidenceChain | None:
        """The cross-layer chain for `suspect` (default: the first placed on a node), probed
        on this fabric (`triage.chain`); None when it is on no node."""
        from fabtui.workspace.triaging import evidence_chain

        return await evidence_chain(report, self.graph(), self, timeout, suspect=suspect)

    def slow_job(self, *, inputs: Path | None = None, job: str | None = None,
                 since: float = 3600.0, topology: Path | None = None,
                 job_log: str | None = None) -> SlowJobReport:
        """`fabtui triage slow`: the slow or jittery episodes of a job's window and the chain of
        each (docs/triage-slow.md). Reads `inputs` (a `SlowJobInputs` JSON file) when given;
        else, on the demo fabric, plays its job (4242) over the last `since` seconds of the
        scenario's clock. `job_log`: the job's log as a path on its nodes, in place of the
        inputs' own (`SlowJobInputs.job_log`). Raises `InputError` for inputs that cannot be
        read, `RequestError` for a job this fabric cannot read. Note: starts the demo fabric's
        state when simulated and none runs."""
        from fabtui.workspace import triaging

        if inputs is not None:
            read = triaging.read_slow_inputs(inputs)
            if job_log:
                read = read.model_copy(update={"job_log": job_log})
            return triaging.slow_job(self.graph(topology), inputs=read)
        if not self.simulated(topology):
            raise RequestError("a real fabric's job is read from Prometheus by "
                               "`fabtui.workspace.slowprom.slow_job`; here give --inputs FILE "
                               "(docs/triage-slow.md)")
        if job not in (None, triaging.DEMO_JOB):
            raise RequestError(f"the demo fabric runs job {triaging.DEMO_JOB}, not {job}")
        from fabtui.sim.state import build_sim
        from fabtui.workspace.simfabric import sim_state, switch_notice, unhealthy_notice

        switched = switch_notice(self.settings)
        _, state = sim_state(self.settings)
        message = switched or unhealthy_notice(state)
        if message and self.notice is not None:
            self.notice(message)
        sim = build_sim(state)
        now = state.now()
        frame = triaging.demo_slow_frame(sim, start=max(0.0, now - since), end=now)
        frame.job_log = job_log or frame.job_log
        return triaging.slow_job(sim.graph, frame=frame)

    def simulated(self, topology: Path | None = None) -> bool:
        """True when probes on `topology` (default: the configured one) are answered by the
        simulated fabric: the settings say so and it is the configured topology."""
        return self.settings.simulated and topology in (None, self.settings.topology)

    def transports(self, topology: Path | None = None) -> Transports:
        """Fresh transports for one runner (a runner closes its own): simulated or real, by
        `simulated()`. Note: starts the demo fabric's state when simulated and none runs."""
        from fabtui.probes.runner import Transports

        if not self.simulated(topology):
            return Transports()
        from fabtui.workspace.simfabric import (
            sim_state,
            sim_transports,
            switch_notice,
            unhealthy_notice,
        )

        switched = switch_notice(self.settings)  # before the state switches
        path, state = sim_state(self.settings)
        message = switched or unhealthy_notice(state)
        if message and self.notice is not None:
            self.notice(message)
        return sim_transports(path)

    def runner(self, topology: Path | None = None, *, fabric: bool = True) -> ProbeRunner:
        """A probe runner on this fabric (`fabric=False`: this machine only, no topology)."""
        from fabtui.probes.runner import ProbeRunner

        if not fabric:
            return ProbeRunner(None)
        return ProbeRunner(self.graph(topology), self.transports(topology))

    # catalogs ---------------------------------------------------------------------------------
    @property
    def catalog(self) -> dict[str, ProbeDef]:
        """The probe catalog (user folders first), read on first use."""
        with self._build:
            if self._catalog is None:
                from fabtui.probes.catalog import load_catalog

                self._catalog = load_catalog(list(self.settings.probe_dirs))
            return self._catalog

    @property
    def library(self) -> Library:
        """The runbook library (user folders first), read on first use."""
        with self._build:
            if self._library is None:
                from fabtui.runbooks.library import load_library

                self._library = load_library(list(self.settings.runbook_dirs))
            return self._library

    @property
    def scenarios(self) -> list[str]:
        """The demo fabric's scenario names (what a runbook test may name)."""
        with self._build:
            if self._scenarios is None:
                from fabtui.sim.scenario import scenario_files, shipped_scenarios

                self._scenarios = list(scenario_files([shipped_scenarios()]))
            return self._scenarios

    def probe(self, name: str) -> ProbeDef:
        """The catalog's probe `name`. Raises `RequestError` (with close names) if none."""
        definition = self.catalog.get(name)
        if definition is None:
            close = difflib.get_close_matches(name, list(self.catalog), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else "; see `fabtui probe list`"
            raise RequestError(f"no probe {name!r}{hint}")
        return definition

    def runbook(self, name: str) -> Runbook:
        """The runbook `name` (an id or a file). Raises `InputError` if there is none."""
        from fabtui.runbooks.library import load_one

        return load_one(name, self.library)

    # lint -------------------------------------------------------------------------------------
    def lint(self, book: Runbook) -> list[LintIssue]:
        """Lint `book` against this workspace's probes, runbooks and scenarios."""
        from fabtui.runbooks.lint import lint

        return lint(book, probes=self.catalog, runbooks=self.library.runbooks,
                    scenarios=self.scenarios)

    def lint_paths(self, paths: Sequence[Path] = ()) -> tuple[list[LintIssue], int]:
        """Lint files or folders (default: the library folders): the issues and files read."""
        from fabtui.paths import display_path
        from fabtui.runbooks.lint import lint_parse_error
        from fabtui.runbooks.reader import read_runbook

        files: list[Path] = []
        for path in paths or self.settings.runbook_dirs:
            if path.is_dir():
                files += sorted(p for p in path.glob("*.md") if p.name.lower() != "readme.md")
            elif path.exists():
                files.append(path)
            else:
                raise RequestError(f"{path}: no such file or folder")
        issues: list[LintIssue] = []
        for file in files:
            try:
                book = read_runbook(file, display_path(file), lenient=True)
            except InputError as exc:
                issues += lint_parse_error(exc)
                continue
            issues += self.lint(book)
        return issues, len(files)

    def refuse_if_broken(self, book: Runbook) -> None:
        """Raise `InputError` (the first error, and how many) if `book` has lint errors."""
        issues = [i for i in self.lint(book) if i.severity == "error"]
        if issues:
            raise InputError.single(book.path, issues[0].line, f"{len(issues)} lint error"
                                    f"{'s' if len(issues) != 1 else ''}, first: "
                                    f"{issues[0].message} (fabtui runbook lint shows them all)")

    def test_runbooks(self, names: Sequence[str] = ()) -> Iterator[TestOutcome]:
        """Run the declared test cases of runbooks `names` (default: the whole library, by id)
        on a fresh simulated fabric each, yielding each case's outcome as it ends. A runbook
        with lint errors, or one that declares no case, is one failed outcome saying why (its
        cases are not run). Raises `InputError` for a name that is no runbook."""
        import asyncio

        from fabtui.paths import demo_topology, shipped_templates
        from fabtui.runbooks.testing import TestOutcome, run_test

        books = [self.runbook(n) for n in names] if names else \
            sorted(self.library.runbooks.values(), key=lambda r: r.meta.id)
        for book in books:
            errors = [i for i in self.lint(book) if i.severity == "error"]
            if errors:
                yield TestOutcome(book.meta.id, None, False, [f"lint: {e}" for e in errors],
                                  not_run=f"{len(errors)} lint error(s)")
                continue
            if not book.meta.tests:
                yield TestOutcome(book.meta.id, None, False, ["declares no test"],
                                  not_run="declares no test")
                continue
            for case in book.meta.tests:
                yield asyncio.run(run_test(book, case, topology=demo_topology(),
                                           template_dirs=[shipped_templates()],
                                           catalog=self.catalog))

    # incidents from Alertmanager ----------------------------------------------------------------
    @property
    def alerts(self) -> IncidentBook:
        """The incidents Alertmanager's alerts became (`fabtui.workspace.alerting`): their own
        journal in the data folder, opened on first use and read back; `close()` closes it."""
        with self._build:
            if self._alerts is None:
                from fabtui.workspace.alerting import open_book

                self._alerts = open_book(self)
            return self._alerts

    # the journal ------------------------------------------------------------------------------
    @property
    def journal(self) -> Journal:
        """The journal of the data folder (opened on first use; `close()` closes it)."""
        with self._build:
            if self._journal is None:
                from fabtui.journal.store import Journal, journal_path

                self._journal = Journal(journal_path(self.settings.data_dir))
            return self._journal

    def recorded(self, session: str) -> tuple[Runbook, list[Event]]:
        """A recorded session's runbook (as the library has it now) and its events, to read it
        back. Raises `RequestError` (no such session) or `InputError` (its runbook is gone)."""
        events = self.events(session)
        found = self.journal.session(session)
        return self.runbook(found[0].runbook if found else ""), events

    def sessions(self, limit: int = 20) -> list[SessionInfo]:
        """Recorded sessions, newest first."""
        return self.journal.sessions(limit)

    def events(self, session: str) -> list[Event]:
        """Every recorded event of `session`. Raises `RequestError` if it has none."""
        events = self.journal.events(session)
        if not events:
            raise RequestError(f"no session {session!r}")
        return events

    # the case library -------------------------------------------------------------------------
    @property
    def cases(self) -> CaseLibrary:
        """The case library of the data folder, opened on first use: the configured case
        folders are imported then (only new and edited files; a file that fails is told through
        `notice` and the others are imported)."""
        with self._build_cases:
            if self._cases is None:
                from fabtui.cases.library import CaseLibrary
                from fabtui.paths import display_path
                from fabtui.runbooks.redact import Redactor

                self._cases = CaseLibrary(self.settings.data_dir, self.settings.case_dirs,
                                          mask=Redactor(extra=self.settings.redact).text,
                                          locate=self._locate(), label=display_path)
                self.case_sync = self._cases.sync()
                if self.notice is not None:
                    for note in self.case_sync.notes:
                        self.notice(f"case library: {note}")
                if self.case_sync.problems and self.notice is not None:
                    first = self.case_sync.problems[0]
                    more = len(self.case_sync.problems) - 1
                    self.notice(f"case library: {first}" + (f" (and {more} more problem"
                                                           f"{'s' if more != 1 else ''}: fabtui "
                                                           "cases import shows them)"
                                                           if more else ""))
            return self._cases

    def _locate(self) -> Locate | None:
        """Where the configured fabric puts a component id (rails, node, leaf), for matching
        cases by rail; None when the topology cannot be read (cases still work)."""
        from fabtui.cases.components import locator

        try:
            return locator(self.topology().topology)
        except InputError:
            return None

    def session_id(self, name: str) -> str:
        """`name` as a session id: `last` is the newest session that is not a dry run (a dry
        run measured nothing: `RequestError` when there is no other); anything else is
        returned as it is."""
        from fabtui.runbooks.engine import DRY_RUN

        if name != "last":
            return name
        newest = next((s for s in self.journal.sessions(200) if s.status != DRY_RUN), None)
        if newest is None:
            raise RequestError(f"no session recorded in {self.journal.path} yet (dry runs "
                               "are not `last`: name one by its id)")
        return newest.id

    def session_record(self, session: str) -> SessionRecord:
        """What filing reads about `session` (a `SessionRecord`; `last`: the newest). Raises
        `RequestError`."""
        from fabtui.cases.filing import SessionRecord

        session = self.session_id(session)
        found = self.journal.session(session)
        if found is None:
            raise RequestError(f"no session {session!r} in {self.journal.path} "
                               "(fabtui runbook sessions)")
        info, _inputs = found
        book = self.library.runbooks.get(info.runbook)
        return SessionRecord(id=info.id, runbook=info.runbook, title=book.title if book
                             else info.title, status=info.status, started_at=info.started_at,
                             operator=info.operator, events=self.journal.events(session),
                             symptoms=list(book.meta.symptoms) if book else [],
                             tags=list(book.meta.tags) if book else [])

    def file_case(self, session: str) -> Case:
        """File the incident `session` belongs to (it, and the sessions that handed over to
        it: `incident`) as one draft case, masked, and store it. A session still under way
        (`under_way`) is filed as it stands so far: filing it again once it has ended updates
        the draft."""
        return self.cases.file_incident(self.incident(session))

    def under_way(self, session: str) -> str | None:
        """Why `session` (`last`: the newest) is not a finished record yet, or None: it waits at
        a gate, was interrupted or is running, and can still go on (`runbook resume`)."""
        record = self.session_record(session)
        if record.status not in _NOT_ENDED:
            return None
        return (f"session {record.id} has not ended ({record.status}): the draft holds it so "
                f"far; once it has ended (`fabtui runbook resume {record.id}`, or `fabtui "
                f"runbook abandon {record.id} --reason WHY`), file it again to update the "
                "draft, and only then complete the case")

    def incident(self, session: str, within_s: float = 24 * 3600) -> list[SessionRecord]:
        """The sessions of `session`'s incident, first to last: `session` and, before it, the
        session that handed over to it, and so on back. The hand-over link the journal holds
        (`handed_over_from`) decides; a session journaled before such links is linked to the
        newest session that ended handing over to its runbook (`next: runbook ...`) within
        `within_s` before it started and whose recorded values hold every node, NIC, port or
        switch this session was given (the hand-over carried them). Raises `RequestError` for
        an unknown session."""
        chain = [self.session_record(session)]
        while (before := self._handed_over_from(chain[0], within_s)) is not None and \
                before not in {r.id for r in chain}:
            chain.insert(0, self.session_record(before))
        return chain

    def _handed_over_from(self, current: SessionRecord, within_s: float) -> str | None:
        """The session that handed over to `current`: the one its journal names
        (`handed_over_from`, written when the hand-over opened it); for a session journaled
        before that link existed, inferred as `incident` says."""
        from fabtui.model.events import HandedOverFrom, SessionFinished

        named = next((e.data.session for e in current.events
                      if isinstance(e.data, HandedOverFrom)), None)
        if named is not None:
            return named if self.journal.session(named) is not None else None
        earlier = [s for s in self.journal.sessions(200) if s.started_at < current.started_at]
        for info in earlier:  # newest first
            if current.started_at - info.started_at > within_s:
                break
            events = self.journal.events(info.id)
            ended = next((e.data for e in reversed(events)
                          if isinstance(e.data, SessionFinished)), None)
            if ended is None or ended.handover != current.runbook:
                continue
            given = self._fabric_inputs(current.id)
            held = {str(v) for e in events for v in getattr(e.data, "vars", {}).values()
                    if isinstance(v, str | int)}
            if given and given <= held:
                return info.id
        return None

    def _fabric_inputs(self, session: str) -> set[str]:
        """The node, NIC, port and switch values `session` was started with."""
        from fabtui.model.runbook import InputType

        found = self.journal.session(session)
        if found is None:
            return set()
        info, inputs = found
        book = self.library.runbooks.get(info.runbook)
        kinds = {InputType.NODE, InputType.NIC, InputType.PORT, InputType.SWITCH}
        names = {spec.name for spec in book.meta.inputs if spec.type in kinds} if book else set()
        return {str(v) for k, v in inputs.items() if k in names and v}

    def case_or_session(self, name: str) -> Case:
        """The case `name`, or the draft a session `name` would file as (not stored)."""
        from fabtui.cases.filing import draft_incident

        if name == "last":
            name = self.session_id(name)
        if self.cases.has(name):
            return self.cases.get(name)
        if self.journal.session(name) is not None:
            return self.cases.masked(draft_incident(self.incident(name)))
        try:
            return self.cases.get(name)
        except RequestError as exc:
            raise RequestError(f"{exc} (nor is it a session: fabtui runbook sessions)") from None

    # runs -------------------------------------------------------------------------------------
    def open_run(self, name: str, *, inputs: Mapping[str, Any], operator: Operator,
                 observers: Sequence[Observer] = (), skips: Mapping[str, str] | None = None,
                 start_at: str | None = None, dry_run: bool = False,
                 operator_name: str | None = None,
                 handed_over_from: str | None = None) -> Engine:
        """An engine ready to run runbook `name` (nothing journaled until it runs);
        `operator_name` is who runs it, as the sessions list shows; `handed_over_from` is the
        session whose hand-over (`next: runbook NAME`) opens it: both sessions journal the
        link when it begins, and the case of the incident spans them.

        Raises `InputError` (unknown runbook, lint errors, bad inputs) or `RequestError` (a
        skip or start step the runbook does not have, a session that did not hand over to
        `name`).
        """
        from fabtui.runbooks.inputs import resolve_inputs

        book = self.runbook(name)
        self.refuse_if_broken(book)
        _check_answers(book, operator)
        source = self._handover_source(handed_over_from, book.meta.id) \
            if handed_over_from else None
        values = resolve_inputs(book, dict(inputs), self.graph())
        engine = self._engine(book, values, operator, observers, dry_run, operator_name)
        engine.handed_over_from = source
        engine.planned_skips = dict(skips or {})
        unknown = set(engine.planned_skips) - {b.id for b in book.blocks()}
        if unknown:
            raise RequestError(f"--skip: no block {', '.join(sorted(unknown))} in "
                               f"{book.meta.id}")
        if start_at:
            if book.step(start_at) is None:
                raise RequestError(f"--start-at: no step {start_at!r} (steps: "
                                   f"{', '.join(s.id for s in book.steps)})")
            engine.jump(start_at, "--start-at")
        return engine

    def _handover_source(self, session: str, runbook: str) -> tuple[str, str]:
        """(session, its runbook) when `session` ended handing over to `runbook`; raises
        `RequestError` otherwise (a link the journal would get wrong)."""
        from fabtui.model.events import SessionFinished

        session = self.session_id(session)
        found = self.journal.session(session)
        if found is None:
            raise RequestError(f"--handed-over-from: no session {session!r} in "
                               f"{self.journal.path} (fabtui runbook sessions)")
        ended = next((e.data for e in reversed(self.journal.events(session))
                      if isinstance(e.data, SessionFinished)), None)
        if ended is None or ended.handover != runbook:
            how = "has not ended" if ended is None else \
                (f"handed over to {ended.handover}" if ended.handover
                 else f"ended {ended.outcome.value} without a hand-over")
            raise RequestError(f"--handed-over-from: session {session} ({found[0].runbook}) "
                               f"{how}, not to {runbook}")
        return session, found[0].runbook

    def _resumable(self, session: str) -> tuple[Runbook, dict[str, Any], list[Event], list[str]]:
        """The runbook of an unfinished `session`, its recorded inputs, its events and notes
        for the operator. Raises `RequestError` (no such session, finished)."""
        from fabtui.model.events import EventKind, SessionStarted

        session = self.session_id(session)
        found = self.journal.session(session)
        if found is None:
            raise RequestError(f"no session {session!r} in {self.journal.path} "
                               "(fabtui runbook sessions)")
        info, recorded = found
        events = self.journal.events(session)
        if any(e.kind is EventKind.SESSION_FINISHED for e in events) and \
                info.status != "error":
            raise RequestError(f"session {session} has already finished ({info.status}): "
                               f"`fabtui cases file {session}` files it as a case, `fabtui "
                               f"runbook run {info.runbook}` starts a new session")
        book = self.runbook(info.path if Path(info.path).is_file() else info.runbook)
        started = next((e.data for e in events if isinstance(e.data, SessionStarted)), None)
        notes = []
        if started is not None and started.digest != book.digest:
            notes.append(f"{book.path} changed since the session started; resuming with the "
                         "file as it is now")
        return book, dict(recorded), events, notes

    def resume_needs(self, session: str) -> list[AskAgain]:
        """The secrets a resume of `session` asks again (never stored: see `runbooks.resume`),
        for a face to prompt for before `resume`. Raises `RequestError` as `resume` does."""
        from fabtui.runbooks.resume import ask_again

        book, recorded, events, _ = self._resumable(session)
        return ask_again(book, recorded, events)

    def resume(self, session: str, *, inputs: Mapping[str, Any], operator: Operator,
               observers: Sequence[Observer] = (),
               operator_name: str | None = None) -> Resumed:
        """An engine that continues `session` (`last`: the newest) after its last finished
        block, every resume rule applied: `inputs` gives runbook inputs and the secrets that
        `resume_needs` lists (by name). Raises `RequestError` (no such session, finished, a
        secret not given again) or `InputError` (a value that does not check)."""
        from fabtui.model.events import SessionStarted
        from fabtui.runbooks.inputs import convert, resolve_inputs
        from fabtui.runbooks.redact import MASK, Redactor
        from fabtui.runbooks.resume import again_phrase, ask_again, refusal

        session = self.session_id(session)
        book, recorded, events, notes = self._resumable(session)
        _check_answers(book, operator)
        asks = ask_again(book, recorded, events)
        missing = [a for a in asks if a.needed and a.name not in inputs]
        if missing:
            raise RequestError(refusal(session, missing))
        notes += [f"secret input {a.name} was never stored: resuming with its default (give "
                  f"--input {a.name}=... if the run had another value)"
                  for a in asks if not a.needed and a.name not in inputs]
        asked_by_blocks = {a.name: a.spec for a in asks if a.block is not None}
        given = {k: v for k, v in recorded.items() if v != MASK}
        given.update((k, v) for k, v in inputs.items() if k not in asked_by_blocks)
        values = resolve_inputs(book, given, self.graph())
        secrets: dict[str, Any] = {}
        for name, spec in asked_by_blocks.items():
            try:
                secrets[name] = convert(spec, inputs[name], self.graph())
            except ValueError as exc:
                raise InputError.single("--input", None, f"{name}: " + Redactor(
                    str(inputs[name])).text(str(exc))) from None
        started = next((e.data for e in events if isinstance(e.data, SessionStarted)), None)
        engine = self._engine(book, values, operator, observers,
                              started.dry_run if started is not None else False,
                              operator_name)
        engine.restore(session, events, secrets)
        notes += [f"{m.note()}: the resume asks to type `{again_phrase(m.block)}` (or its "
                  "confirm phrase after `again`), not the first answer"
                  for m in engine.may_have_run.values()]
        return Resumed(engine, notes)

    def abandon(self, session: str, reason: str, *, engine: Engine | None = None) -> str:
        """End `session` (`last`: the newest) for good, as aborted by the operator for `reason`
        (required: it is what the next engineer reads); returns the session id. The one way a
        session that waits at a gate, was interrupted or stopped ends: a "no" at a gate only
        makes it wait. `engine`: the engine this face runs the session with (its running block
        is stopped first). Raises `RequestError` (no reason, no such session, already ended)."""
        from fabtui.runbooks.abandon import abandon
        from fabtui.runbooks.redact import Redactor

        if not reason.strip():
            raise RequestError("abandon needs a reason (it is recorded for whoever picks this "
                               "up next): --reason \"...\"")
        if engine is not None and engine.session is not None and \
                engine.session == self.session_id(session):
            if engine.summary is not None and not engine.waiting:
                raise RequestError(f"session {engine.session} has already ended "
                                   f"({engine.summary.outcome.value}): nothing to abandon")
            engine.abort(reason.strip())
            return engine.session
        session = self.session_id(session)
        found = self.journal.session(session)
        if found is None:
            raise RequestError(f"no session {session!r} in {self.journal.path} "
                               "(fabtui runbook sessions)")
        from fabtui.views.guided import FINISHED

        status = found[0].status
        if status in FINISHED:
            raise RequestError(f"session {session} has already ended ({status}): nothing to "
                               "abandon")
        abandon(self.journal, session, self.journal.events(session), reason,
                Redactor(extra=self.settings.redact))
        return session

    async def continue_interrupted(self, engine: Engine, *, operator: Operator,
                             observers: Sequence[Observer] = (),
                             operator_name: str | None = None) -> Resumed:
        """Take up again a session whose `engine` was interrupted in this process (the operator
        stepped away from a gate): its runner closed, a fresh engine resumed from the journal
        with the secrets still in hand (they were never stored, so only this process knows
        them). Raises as `resume` does."""
        if engine.session is None:
            raise RequestError("the session has not started: nothing to continue")
        await engine.close()
        return self.resume(engine.session, inputs=engine.secrets_in_hand(), operator=operator,
                           observers=observers, operator_name=operator_name)

    def _engine(self, book: Runbook, values: dict[str, Any], operator: Operator,
                observers: Sequence[Observer], dry_run: bool,
                operator_name: str | None = None) -> Engine:
        from fabtui.runbooks.engine import Engine
        from fabtui.runbooks.redact import Redactor

        return Engine(book, inputs=values, runner=self.runner(), catalog=self.catalog,
                      journal=self.journal, operator=operator, dry_run=dry_run,
                      redactor=Redactor(extra=self.settings.redact), observers=observers,
                      fabric=self.fabric_facts(), operator_name=operator_name)

    def fabric_facts(self) -> dict[str, Any]:
        """What a session records about where it ran: the cluster and, on the demo fabric, the
        scenario playing and the faults injected into it."""
        facts: dict[str, Any] = {"cluster": self.topology().topology.cluster.name,
                                 "simulated": self.simulated()}
        if facts["simulated"]:
            from fabtui.workspace.simfabric import sim_state

            _, state = sim_state(self.settings)
            facts["scenario"] = state.scenario.stem
            facts["injected"] = [f"{f.fault} on {f.component}" for f in state.injected]
        return facts

    @staticmethod
    async def drive(engine: Engine) -> RunSummary:
        """Run `engine` to its end; its runner's sessions are closed however it ends.

        Raises `asyncio.CancelledError` when cancelled: the block that ran is journaled
        `cancelled`, the session `cancelled` (resumable), every remote session closed.
        """
        try:
            return await engine.run()
        finally:
            await engine.close()

    # configuration intent (issue 41) ----------------------------------------------------------
    def render_configs(self, scenario: str, devices: Sequence[str] = (),
                       topology: Path | None = None) -> list[Rendered]:
        """Scenario `scenario` (`configs/scenarios/`) rendered for `devices` (default: every
        node and switch of the fabric). Raises `InputError` or `RequestError`."""
        from fabtui.workspace.intent import render_configs

        return render_configs(self.graph(topology), scenario, list(devices) or None)

    async def drift(self, scenario: str | None = None, devices: Sequence[str] = (),
                    topology: Path | None = None) -> DriftReport:
        """The running configuration of `devices` (default: every node and switch) against
        configuration scenario `scenario` (default: the fabric's kind's), each difference with
        its fix. Runs read-only probes. Raises `InputError` or `RequestError`."""
        from fabtui.workspace.intent import drift

        return await drift(self, self.graph(topology), scenario, list(devices) or None)

    async def fleet_check(self, devices: Sequence[str] = (),
                          topology: Path | None = None) -> FleetReport:
        """What every node and switch (or `devices`) runs against the selection database
        (`configs/selection/`): each combination outside the validated matrix, with its
        source. Runs read-only probes. Raises `InputError` or `RequestError`."""
        from fabtui.workspace.intent import fleet_check

        return await fleet_check(self, self.graph(topology), list(devices) or None)

    async def record_baseline(self, name: str, scenario: str | None = None,
                              replace: bool = False
                              ) -> tuple[Baseline, Judgement]:
        """Read every device, judge it (drift against `scenario`, the fleet check, every link's
        state, optics and error counters, every device answering) and store its versions and
        settings as baseline `name` in the data folder, good when nothing was found. A good
        baseline is not replaced by a state that is not good unless `replace` (`RequestError`,
        nothing written). Runs read-only probes; writes `baselines.sqlite`."""
        from fabtui.workspace.intent import record_baseline

        return await record_baseline(self, self.graph(), self.settings.data_dir, name, scenario,
                                     replace)

    async def since_baseline(self, name: str | None = None,
                             job_nodes: Sequence[str] = ()) -> tuple[Baseline, list[Change]]:
        """What changed since baseline `name` (default: the newest good one), per component;
        only what a job on `job_nodes` uses when given. Runs read-only probes."""
        from fabtui.workspace.intent import since_baseline

        return await since_baseline(self, self.graph(), self.settings.data_dir, name,
                                    list(job_nodes) or None)

    # probes -----------------------------------------------------------------------------------
    def sweep_targets(self, name: str, target: str | None,
                      topology: Path | None = None) -> list[ProbeTarget] | None:
        """The targets `target` names when it is a set (a glob, a range, `rail:N`, `leaf:X`, a
        list); None when it names one target. Raises `RequestError` for a set matching nothing."""
        from fabtui.probes.targets import LOCAL_NAMES, TargetError, is_set, resolve_set

        definition = self.probe(name)
        if target is None or definition.target == "local" or target.strip() in LOCAL_NAMES:
            return None
        try:
            targets = resolve_set(self.graph(topology), target, definition.target)
        except TargetError as exc:
            raise RequestError(str(exc)) from None
        return targets if is_set(target) or len(targets) > 1 else None

    async def sweep(self, name: str, targets: Sequence[ProbeTarget], params: Mapping[str, str],
                    topology: Path | None = None, *, limit: int | None = None,
                    target_timeout: float | None = None, confirmed: str | None = None,
                    named: str | None = None) -> AsyncGenerator[ProbeResult, None]:
        """Run probe `name` on every target, at most `limit` at once, yielding each result as
        it completes (a dead or slow target is a result with its error, never a stall).
        Leaving the iteration early cancels the targets still running.

        A dangerous probe needs `confirmed`, the phrase typed for the set as the operator named
        it (`named`: the target text, see `probes.danger`); without it `DangerRefused` (a
        `RequestError`) is raised and nothing runs."""
        from fabtui.probes.runner import DEFAULT_FANOUT

        definition = self.probe(name)
        runner = self.runner(topology)
        try:
            async with contextlib.aclosing(runner.sweep(
                    definition, targets, dict(params), limit=limit or DEFAULT_FANOUT,
                    target_timeout=target_timeout, confirmed=confirmed,
                    named=named)) as stream:
                async for result in stream:
                    yield result
        finally:
            await runner.close()

    async def cabling(self, nodes: Sequence[str] = (), *, affinity: bool = True,
                      topology: Path | None = None) -> CablingReport:
        """The design against the cabling: LLDP (or ibnetdiscover) and `nvidia-smi topo -m`
        read from the fabric and compared with the topology, each difference with its fix
        (`fabtui.workspace.cabling`). `nodes`: only those nodes' cabling. Runs read-only
        probes on the fabric. Raises `RequestError` for a node not in the fabric."""
        from fabtui.workspace.cabling import read_cabling

        runner = self.runner(topology)
        try:
            return await read_cabling(self.graph(topology), runner, self.catalog, nodes=nodes,
                                      affinity=affinity)
        finally:
            await runner.close()

    async def scheduler_topology(self, fmt: str = "conf", *, cabled: bool = False,
                                 topology: Path | None = None) -> str:
        """Slurm's tree for this fabric as `topology.conf` (`fmt` conf) or `topology.yaml`
        (yaml, Slurm 25.05 and later), as designed, or as cabled (`cabled`: reads the fabric as
        `cabling` does). `fabtui.workspace.scheduler`."""
        from fabtui import __version__
        from fabtui.workspace.scheduler import generate, plant_leaves

        loaded = self.topology(topology)
        leaves = plant_leaves(await self.cabling(affinity=False, topology=topology)) \
            if cabled else None
        header = (f"Slurm topology/tree for {loaded.topology.cluster.name}, generated by "
                  f"fabtui {__version__} from {loaded.source} "
                  f"({'as cabled: LLDP / ibnetdiscover' if cabled else 'as designed'}).\n"
                  "One leaf switch per set of nodes cabled to the same leaves (one hop on "
                  "every rail); the fabric switches each stands for follow the #.")
        if fmt == "yaml":
            header += "\ntopology.yaml is read by Slurm 25.05 and later (topology.yaml(5))."
        return generate(self.graph(topology), fmt, header, leaves)

    async def scheduler_audit(self, text: str, source: str, *, cabled: bool = False,
                              topology: Path | None = None) -> SchedulerAudit:
        """A live Slurm tree (`text`: topology.conf or `scontrol show topology` output) against
        the design, and against the cabling when `cabled` (reads the fabric). Raises
        `InputError` for text that is neither."""
        from fabtui.workspace.scheduler import audit, plant_nics

        nics = plant_nics(await self.cabling(affinity=False, topology=topology)) \
            if cabled else None
        return audit(self.graph(topology), text, source, nics)

    async def scheduler_job(self, slots: Sequence[RankSlot] | None, source: str, *,
                            ranks: Path | None = None, cabled: bool = False,
                            topology: Path | None = None) -> SchedulerAudit:
        """A job's rank placement (`slots` of a Slurm job, or the rank file `ranks`) checked
        for rail locality, on the design's cabling or the plant's (`cabled`: reads the
        fabric). Raises `InputError` for a rank file that does not read."""
        from fabtui.paths import display_path
        from fabtui.topology.ranks import parse_rankfile
        from fabtui.workspace.scheduler import job_locality, plant_nics

        if ranks is not None:
            slots = parse_rankfile(ranks, self.topology(topology).topology,
                                   display_path(ranks))
            source = display_path(ranks)
        if slots is None:
            raise RequestError("no placement to check: give a rank file or a job")
        read = await self.cabling(affinity=False, topology=topology) if cabled else None
        nics = plant_nics(read) if read is not None else None
        return job_locality(self.graph(topology), slots, source, nics,
                            read.unread if read is not None else ())

    def netbox_export(self, url: str, token: str | None, *,
                      topology: Path | None = None) -> ExportResult:
        """Create this fabric's design in the NetBox at `url` (`token`: a reference such as
        `env:NETBOX_TOKEN`); refuses a site that already holds devices
        (`fabtui.workspace.netbox`). Raises `RequestError` / `InputError`."""
        from fabtui.errors import Problem
        from fabtui.workspace.netbox import NetboxError, connect, export_design

        loaded = self.topology(topology)
        try:
            return export_design(connect(url, token), loaded.topology)
        except NetboxError as exc:
            raise InputError([Problem(loaded.source, None, p) for p in exc.problems]) from None

    def netbox_import(self, url: str, token: str | None, site: str) -> Topology:
        """The design NetBox site `site` holds, as a topology (`fabtui.workspace.netbox`).
        Raises `RequestError`, or `InputError` naming each NetBox object that does not read."""
        from fabtui.errors import Problem
        from fabtui.workspace.netbox import NetboxError, connect, import_design

        try:
            return import_design(connect(url, token), site)[0]
        except NetboxError as exc:
            raise InputError([Problem(f"{url.rstrip('/')}/api", None, p)
                              for p in exc.problems]) from None

    async def run_probe(self, name: str, target: str | None, params: Mapping[str, str],
                        topology: Path | None = None, *,
                        confirmed: str | None = None) -> ProbeResult:
        """Run probe `name` on `target` (a topology name, or this machine). Raises
        `RequestError` for a bad request (unknown probe, target or parameter; a dangerous
        probe whose typed phrase `confirmed` does not match: `probes.danger.DangerRefused`)."""
        from fabtui.probes.render import RenderError
        from fabtui.probes.targets import LOCAL_NAMES, TargetError

        definition = self.probe(name)
        local = definition.target == "local" or (target or "").strip() in ("", *LOCAL_NAMES)
        runner = self.runner(topology, fabric=not local)
        try:
            return await runner.run(definition, target, dict(params), confirmed=confirmed)
        except (TargetError, RenderError, ValueError) as exc:
            raise RequestError(str(exc)) from None
        finally:
            await runner.close()


_NOT_ENDED = frozenset(("running", "waiting", "cancelled"))
"""Journal statuses of a session that can still go on (`runbook resume`): not a record yet."""


def _check_answers(book: Runbook, operator: Operator) -> None:
    """Refuse answers given beforehand (a headless run's `--answer`) that no block of `book`
    would read: a mistyped gate name would leave the run waiting at that gate."""
    from fabtui.runbooks.observe import ScriptedOperator
    from fabtui.runbooks.resume import unknown_answers

    if isinstance(operator, ScriptedOperator):
        why = unknown_answers(book, operator.answers)
        if why is not None:
            raise RequestError(f"--answer: {why}")
