"""Configuration: a TOML file that says which fabric to work on and where extra content lives.

The file is found, in order: `--config PATH`, the `FABTUI_CONFIG` environment variable, then the
per-user file (`~/.config/fabtui/config.toml` on Linux). With no file at all every setting has a
default and fabtui runs on the built-in demo fabric. Relative paths in the file are relative to the
file's own folder; `~` is expanded.

Everything the file says is checked when it is read, as `config_file:line: what is wrong`: the
topology and rank files must exist, the scenario must be a shipped one or an existing YAML file,
`simulate` must be a real boolean (`"yes"` is a string, not true), and each `redact` pattern must
be a regular expression that masks secrets, not everything (see `fabtui.redact_check`).

```toml
topology = "clusters/prod-a.yaml"     # default: the shipped demo fabric
ranks = "jobs/llama-ranks.txt"        # default: 8 ranks per node in node order
scenario = "healthy"                  # demo fabric fault scenario
simulate = false                      # default: true on the demo fabric only
redact = ["corp-[A-Za-z0-9]{24}"]      # extra secret patterns never stored
data_dir = "~/fabtui-data"            # journals and the case library (SQLite)
runbook_dirs = ["~/team-runbooks"]    # searched before the shipped runbooks
case_dirs = []
probe_dirs = []
template_dirs = []
poll = ["nic.ethtool@node*:*", "switch.pfc@*"]  # what the app polls: probe@targets
poll_interval = "10s"                 # seconds between the end of a poll and the next
keymap = { "fabric.pause" = "p" }     # the app's keys, by binding id (`?` lists them)
source = "probes"                     # where the live view reads: probes, or prometheus

[slurm]                               # where jobs come from (`--job JOBID`)
host = "login01"                      # runs scontrol / squeue over ssh; default: this machine
distribution = "block"                # task layout when Slurm does not say: block | cyclic
launcher = "srun"                     # multi-node probes: mpirun (default) | srun
launcher_template = ["srun", "--mpi=pmix", "-N", "{nodes}", "--nodelist={nodelist}",
                     "--ntasks-per-node={tasks_per_node}", "{program}"]

[prometheus]                          # the Prometheus the live view reads (docs/prometheus.md)
url = "http://prometheus:9090"
bearer = "env:PROM_TOKEN"             # or username = "fabtui", password = "file:~/.prom-pass"
timeout = "5s"                        # per query
window = "1m"                         # rate() window: at least 4 scrape intervals
stale_after = "2m"                    # a device whose newest sample is older is stale
mode = "auto"                         # full, sieve (read only what nears a limit), recorded
                                      # (the sieve from `fabtui prom rules`' rules), or auto
labels = { node = "instance", gpu_node = "Hostname", nic = "device", port = "device" }
metrics = { "sonic.pfc_rx" = "my_pfc_rx_frames" }   # exporter names, by mapping key
```
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from fabtui import paths
from fabtui.durations import parse_duration
from fabtui.errors import InputError, Problem
from fabtui.redact_check import redact_problem

ENV_VAR = "FABTUI_CONFIG"


HOST_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
"""A host name or ssh alias (never an option: it cannot start with `-`)."""


class SlurmConfig(BaseModel):
    """Where fabtui asks Slurm about jobs, and how it launches multi-node probes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str | None = Field(None, pattern=HOST_NAME)
    """Login or controller host that runs `scontrol` / `squeue` (over ssh). Default: this
    machine; on the demo fabric, the simulated job's first node."""
    distribution: Literal["block", "cyclic"] = "block"
    """Task distribution to assume when the job's record does not name one (Slurm's default
    is block)."""
    launcher: Literal["mpirun", "srun"] = "mpirun"
    """How multi-node probes (nccl-tests across nodes) are launched."""
    launcher_template: tuple[str, ...] | None = None
    """The launcher's argv, one element per item: `{nodes}`, `{nodelist}`, `{hosts}`,
    `{ranks}`, `{tasks_per_node}` are substituted inside an element, `{program}` (an element of
    its own) becomes the program's argv. Default: fabtui's own srun / mpirun line."""


class PrometheusConfig(BaseModel):
    """The `[prometheus]` table: where the fabric's metrics are read (docs/prometheus.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(pattern=r"^https?://\S+$")
    """Prometheus's base URL (`http://prometheus:9090`)."""
    bearer: str | None = Field(None, min_length=1)
    """A credentials reference (`env:VAR`, `file:PATH`, `keyring:NAME`, ...) to a bearer token."""
    username: str | None = Field(None, min_length=1)
    password: str | None = Field(None, min_length=1)
    """A credentials reference to the basic-auth password (with `username`)."""
    timeout: float | str = 10.0
    """Seconds (or a duration) one query may take; Prometheus is told the same."""
    window: str = Field("1m", pattern=r"^[0-9]+[smh]$")
    """The `rate()` window (a PromQL duration): at least four scrape intervals."""
    stale_after: float | str = 120.0
    """A device whose newest sample is older than this (or whose series stopped) is stale."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Which label names what: node, gpu_node, gpu, nic, switch, port, host_pattern."""
    metrics: dict[str, str] = Field(default_factory=dict)
    """Exporter metric names that differ from the defaults, by mapping key."""
    mode: Literal["auto", "full", "sieve", "recorded"] = "auto"
    """`full`: read and judge every series each refresh; `sieve`: ask Prometheus which series
    come near a limit and read only their devices in full; `recorded`: the sieve, read from the
    recording rules `fabtui prom rules` prints; `auto`: sieve from 512 NICs up."""


@dataclass(frozen=True)
class PrometheusSettings:
    """`[prometheus]` resolved: durations in seconds, references not yet resolved."""

    url: str
    bearer: str | None
    username: str | None
    password: str | None
    timeout: float
    window: str
    stale_after: float
    labels: tuple[tuple[str, str], ...]
    metrics: tuple[tuple[str, str], ...]
    mode: str = "auto"


class Config(BaseModel):
    """The settings a config file may hold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    topology: Path | None = None
    """Topology file (explicit or template). Default: the shipped demo fabric."""
    ranks: Path | None = None
    """Rank file placing a job's ranks on nodes and GPUs. Default: 8 per node, node order."""
    scenario: str | None = Field(None, min_length=1)
    """Fault scenario the demo fabric plays (a shipped scenario's name, or a YAML file)."""
    simulate: StrictBool | None = None
    """Answer probes from the simulated fabric instead of real hosts and switches. Default: yes
    on the demo fabric, no on a configured topology."""
    redact: list[str] = Field(default_factory=list)
    """Extra regular expressions whose matches never reach a journal, case or log (site
    secrets: a token format, an internal password convention)."""
    data_dir: Path | None = None
    """Folder for the journal and case databases. Default: the user data folder."""
    runbook_dirs: list[Path] = Field(default_factory=list)
    case_dirs: list[Path] = Field(default_factory=list)
    probe_dirs: list[Path] = Field(default_factory=list)
    template_dirs: list[Path] = Field(default_factory=list)
    poll: list[Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.-]*@\S+$")]] | None = None
    """What the live fabric view polls, each `probe@target set` (`nic.ethtool@node*:*`).
    Default: NIC counters, switch PFC, FEC and optics, GPU health."""
    poll_interval: float | str = 10.0
    """Seconds (or a duration such as `30s`) from the end of one poll to the next."""
    keymap: dict[str, str] = Field(default_factory=dict)
    """The app's keys by binding id (`fabric.pause = "p"`; several keys comma-separated)."""
    slurm: SlurmConfig = Field(default_factory=SlurmConfig)
    """`[slurm]`: where jobs come from and how multi-node probes launch."""
    source: Literal["probes", "prometheus"] = "probes"
    """Where the live view's status comes from: polling probes, or the `[prometheus]` server."""
    prometheus: PrometheusConfig | None = None


@dataclass(frozen=True)
class Settings:
    """The configuration in effect, with every path resolved and the shipped folders appended."""

    source: Path | None
    """The config file read, or None when running on defaults."""
    topology: Path
    topology_is_default: bool
    ranks: Path | None
    scenario: str
    scenario_chosen: bool
    """The scenario was named (config or `--scenario`); otherwise a running demo keeps its own."""
    simulated: bool
    """Probes are answered by the simulated fabric (the demo, or `simulate = true`)."""
    redact: tuple[str, ...]
    data_dir: Path
    runbook_dirs: tuple[Path, ...]
    case_dirs: tuple[Path, ...]
    probe_dirs: tuple[Path, ...]
    template_dirs: tuple[Path, ...]
    poll: tuple[str, ...] = ()
    """What the live view polls (`probe@targets`); empty: the default plan."""
    poll_interval: float = 10.0
    keymap: tuple[tuple[str, str], ...] = ()
    """Binding id -> keys, for the app's remappable keys."""
    slurm: SlurmConfig = SlurmConfig()  # noqa: RUF009 (frozen: one shared default is safe)
    """Where jobs come from (`[slurm]`)."""
    live_source: str = "probes"
    """`probes` or `prometheus`: what the live view reads (the file's `source`)."""
    prometheus: PrometheusSettings | None = None

    def find_template(self, name: str) -> Path | None:
        """The template file called `name` (without `.yaml`) in the template folders, if any."""
        for folder in self.template_dirs:
            for suffix in (".yaml", ".yml"):
                candidate = folder / f"{name}{suffix}"
                if candidate.is_file():
                    return candidate
        return None

    def templates(self) -> list[Path]:
        """Every template file, user folders first; a user template hides a shipped one."""
        seen: dict[str, Path] = {}
        for folder in self.template_dirs:
            for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
                seen.setdefault(path.stem, path)
        return list(seen.values())


def config_path(explicit: Path | None, environ: Mapping[str, str]) -> tuple[Path | None, bool]:
    """The config file to read and whether it must exist (it must, when named explicitly)."""
    if explicit is not None:
        return explicit, True
    if environ.get(ENV_VAR):
        return Path(environ[ENV_VAR]), True
    default = paths.user_config_file()
    return (default, False) if default.is_file() else (None, False)


def load_settings(explicit: Path | None = None,
                  environ: Mapping[str, str] | None = None) -> Settings:
    """Find, read and resolve the configuration. Raises `InputError` for a bad file.

    Note: reads the config file; creates nothing (the data folder is made when first written).
    """
    environ = os.environ if environ is None else environ
    path, required = config_path(explicit, environ)
    if path is None:
        return _resolve(Config(), None)
    label = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if not required:
            return _resolve(Config(), None)
        raise InputError.single(label, None, "config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(label, None, f"cannot read config file: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+)", str(exc))
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise InputError.single(label, int(match.group(1)) if match else None,
                                f"invalid TOML: {reason}") from None
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise InputError([_problem(label, text, error) for error in exc.errors()]) from None
    resolved = _resolve(config, path)
    problems = _check(config, resolved, label, text)
    if problems:
        raise InputError(problems)
    return resolved


def _line_of(text: str, key: str, value: str | None = None) -> int | None:
    """The line of setting `key` in the TOML `text` (of `value`'s literal, for a list item)."""
    match = re.search(rf"(?m)^\s*{re.escape(key)}\s*=", text) if key else None
    if match is None:
        return None
    start = match.start()
    if value is not None:
        # The item's TOML literal (basic or literal string) after the key, else the key's line.
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        for literal in (f"'{value}'", f'"{escaped}"'):
            found = text.find(literal, start)
            if found != -1:
                start = found
                break
    return text.count("\n", 0, start) + 1


def _table_line_of(text: str, table: str, key: str) -> int | None:
    """The line of `key` inside TOML table `[table]` (or its inline `table = {...}`)."""
    header = re.search(rf"(?m)^\s*\[{re.escape(table)}\]\s*$", text)
    if header is not None:
        rest = text[header.end():]
        end = re.search(r"(?m)^\s*\[", rest)
        body = rest[:end.start()] if end else rest
        match = re.search(rf"(?m)^[ \t]*({re.escape(key)})\s*=", body)
        if match is not None:
            return text.count("\n", 0, header.end() + match.start(1)) + 1
        return text.count("\n", 0, header.start()) + 1
    return _line_of(text, table)


def _check(config: Config, settings: Settings, label: str, text: str) -> list[Problem]:
    """What the file names that does not exist or cannot work, found now rather than when used."""
    problems: list[Problem] = []
    for key, given, resolved in (("topology", config.topology, settings.topology),
                                 ("ranks", config.ranks, settings.ranks)):
        if given is not None and resolved is not None and not resolved.is_file():
            what = "is a folder, not a file" if resolved.is_dir() else "no such file"
            problems.append(Problem(label, _line_of(text, key), f"{key}: {resolved}: {what}"))
    if config.scenario is not None:
        reason = scenario_problem(settings.scenario)
        if reason is not None:
            problems.append(Problem(label, _line_of(text, "scenario"), f"scenario: {reason}"))
    if _interval(config.poll_interval) != _interval_strict(config.poll_interval):
        problems.append(Problem(label, _line_of(text, "poll_interval"),
                                f"poll_interval: {config.poll_interval!r}: expected seconds "
                                "above 0 or a duration such as 30s"))
    problems.extend(_prometheus_problems(config, label, text))
    for pattern in config.redact:
        reason = redact_problem(pattern)
        if reason is not None:
            problems.append(Problem(label, _line_of(text, "redact", pattern),
                                    f"redact: {pattern!r} {reason}"))
    return problems


def _prometheus_problems(config: Config, label: str, text: str) -> list[Problem]:
    """A Prometheus source that cannot work: none configured, a bad duration, an unknown label
    role or mapping key, a password without a user."""
    prom = config.prometheus
    if prom is None:
        if config.source == "prometheus":
            return [Problem(label, _line_of(text, "source"), "source = \"prometheus\" needs a "
                            "[prometheus] table with its url")]
        return []
    line = _table_line(text, "prometheus")
    problems = []
    if "@" in re.sub(r"^[a-z]+://([^/?#]*).*", r"\1", prom.url, flags=re.S):  # user:pass@
        problems.append(Problem(label, _line_of(text, "url") or line,
                                "prometheus.url: holds a user name or password before '@' (not "
                                "repeated here): set prometheus.username, and prometheus.password "
                                "or prometheus.bearer as a credentials reference (env:VAR, "
                                "file:PATH, ...); a URL is shown in messages"))
    for key in ("timeout", "stale_after"):
        value = getattr(prom, key)
        if _interval_strict(value) is None:
            problems.append(Problem(label, _line_of(text, key) or line,
                                    f"prometheus.{key}: {value!r}: expected seconds above 0 or "
                                    "a duration such as 30s"))
    roles = ("node", "gpu_node", "gpu", "nic", "switch", "port", "host_pattern")
    for role in prom.labels:
        if role not in roles:
            problems.append(Problem(label, _line_of(text, "labels") or line,
                                    f"prometheus.labels: unknown role {role!r}; roles: "
                                    f"{', '.join(roles)}"))
    pattern = prom.labels.get("host_pattern")
    if pattern is not None:
        try:
            if re.compile(pattern).groups < 1:
                raise re.error("needs a group")
        except re.error as exc:
            problems.append(Problem(label, _line_of(text, "labels") or line,
                                    f"prometheus.labels.host_pattern: {pattern!r}: {exc} "
                                    "(its first group is the topology name)"))
    from fabtui.prom.catalog import BY_KEY

    for key in prom.metrics:
        if key not in BY_KEY:
            close = difflib.get_close_matches(key, list(BY_KEY), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(Problem(label, _line_of(text, "metrics") or line,
                                    f"prometheus.metrics: unknown mapping key {key!r}{hint}"))
    if prom.password is not None and prom.username is None:
        problems.append(Problem(label, _line_of(text, "password") or line,
                                "prometheus.password needs prometheus.username"))
    return problems


def _table_line(text: str, table: str) -> int | None:
    match = re.search(rf"(?m)^\s*\[{re.escape(table)}\]", text)
    return text.count("\n", 0, match.start()) + 1 if match else _line_of(text, table)


def _interval_strict(value: float | str) -> float | None:
    try:
        seconds = float(parse_duration(value)) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None


def scenario_problem(scenario: str) -> str | None:
    """Why `scenario` (a shipped scenario's name or a resolved YAML path) cannot be played."""
    # Imported here: only a config that names a scenario pays for loading the simulator's models.
    from fabtui.sim.scenario import scenario_files, shipped_scenarios, unknown_scenario

    if scenario.endswith((".yaml", ".yml")):
        return None if Path(scenario).is_file() else f"{scenario}: no such file"
    known = scenario_files([shipped_scenarios()])
    if scenario in known:
        return None
    return unknown_scenario(scenario, list(known)).problems[0].message


def _problem(label: str, text: str, error: object) -> Problem:
    assert isinstance(error, dict)
    loc = error["loc"]
    key = str(loc[0]) if loc else ""
    line = _line_of(text, key)
    if len(loc) > 1 and isinstance(loc[1], str):
        line = _table_line_of(text, key, loc[1]) or \
            (_table_line(text, key) if key == "prometheus" else None) or line
        if error["type"] == "extra_forbidden":
            tables: dict[str, type[BaseModel]] = {"slurm": SlurmConfig,
                                                   "prometheus": PrometheusConfig}
            known = ", ".join(tables[key].model_fields) if key in tables else "see the docs"
            return Problem(label, line, f"unknown setting {key}.{loc[1]} (known: {known})")
    elif key == "prometheus":  # the table's header
        line = _table_line(text, key) or line
    if error["type"] == "bool_type":
        return Problem(label, line, f"{key}: expected true or false (without quotes), got "
                                    f"{error.get('input')!r}")
    if error["type"] == "extra_forbidden":
        close = difflib.get_close_matches(key, list(Config.model_fields), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else \
            f"; known settings: {', '.join(Config.model_fields)}"
        return Problem(label, line, f"unknown setting {key!r}{hint}")
    where = ".".join(str(p) for p in loc)
    return Problem(label, line, f"{where}: {error['msg']}")


def _resolve(config: Config, source: Path | None) -> Settings:
    base = source.parent if source is not None else Path.cwd()

    def fix(path: Path) -> Path:
        path = path.expanduser()
        return path if path.is_absolute() else base / path

    def folders(user: list[Path], shipped: Path | None) -> tuple[Path, ...]:
        resolved = [fix(p) for p in user]
        return tuple(resolved + ([shipped] if shipped is not None else []))

    return Settings(
        source=source,
        topology=fix(config.topology) if config.topology else _demo_fabric(config.scenario, fix),
        topology_is_default=config.topology is None,
        ranks=fix(config.ranks) if config.ranks else None,
        scenario=_scenario(config.scenario, fix),
        scenario_chosen=config.scenario is not None,
        simulated=config.simulate if config.simulate is not None else config.topology is None,
        redact=tuple(config.redact),
        data_dir=fix(config.data_dir) if config.data_dir else paths.default_data_dir(),
        runbook_dirs=folders(config.runbook_dirs, paths.shipped_dir("runbooks")),
        case_dirs=folders(config.case_dirs, paths.shipped_dir("cases")),
        probe_dirs=folders(config.probe_dirs, paths.shipped_dir("probes")),
        template_dirs=folders(config.template_dirs, paths.shipped_templates()),
        poll=tuple(config.poll or ()),
        poll_interval=_interval(config.poll_interval),
        keymap=tuple(sorted(config.keymap.items())),
        slurm=config.slurm,
        live_source=config.source,
        prometheus=_prometheus(config.prometheus),
    )


def _prometheus(prom: PrometheusConfig | None) -> PrometheusSettings | None:
    if prom is None:
        return None
    return PrometheusSettings(
        url=prom.url.rstrip("/"), bearer=prom.bearer, username=prom.username,
        password=prom.password, timeout=_interval(prom.timeout), window=prom.window,
        stale_after=_interval(prom.stale_after), labels=tuple(sorted(prom.labels.items())),
        metrics=tuple(sorted(prom.metrics.items())), mode=prom.mode)


def _interval(value: float | str) -> float:
    """`poll_interval` in seconds (checked in `_check`; a bad one falls back to the default)."""
    try:
        seconds = float(parse_duration(value)) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        return 10.0
    return seconds if seconds > 0 else 10.0


def with_scenario(s: Settings, name: str, *, chosen: bool = True) -> Settings:
    """`s` playing scenario `name` (`--scenario`, the app's demo screen): on the default demo
    fabric, a scenario written for another shipped fabric (`topology: h100-64gpu-ib`) brings
    that fabric with it; a configured topology stays."""
    import dataclasses

    topology = _demo_fabric(name, lambda p: p.resolve()) if s.topology_is_default \
        else s.topology
    return dataclasses.replace(s, scenario=name, scenario_chosen=chosen, topology=topology)


def _demo_fabric(scenario: str | None, fix: Callable[[Path], Path]) -> Path:
    """The demo fabric a scenario plays on when no topology is configured: the shipped template
    its `topology:` names (the InfiniBand variant for the `ib-*` scenarios), else demo.yaml.
    A scenario that cannot be read falls back to the demo (its problem is reported by
    `_check`, with its line)."""
    if scenario is None:
        return paths.demo_topology()
    # Imported here: only a command that names a scenario pays for the simulator's models.
    from fabtui.sim.scenario import find_scenario, load_scenario

    try:
        wanted = load_scenario(find_scenario(_scenario(scenario, fix))).scenario.topology
    except (InputError, OSError):
        return paths.demo_topology()
    if wanted is None:
        return paths.demo_topology()
    template = paths.shipped_templates() / f"{wanted}.yaml"
    return template if template.is_file() else paths.demo_topology()


def _scenario(name: str | None, fix: Callable[[Path], Path]) -> str:
    """A scenario name as given, a scenario file resolved like every path; default healthy."""
    if name is None:
        return "healthy"
    return str(fix(Path(name))) if name.endswith((".yaml", ".yml")) else name
