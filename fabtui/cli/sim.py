"""`fabtui sim ...`: the demo fabric's scenarios, its clock, and game-day fault injection."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from fabtui.cli.context import UserError, key_values, notice_once, settings
from fabtui.config import Settings
from fabtui.durations import parse_duration
from fabtui.sim.scenario import (
    FaultKind,
    find_scenario,
    load_scenario,
    scenario_files,
    shipped_scenarios,
)
from fabtui.sim.state import (
    SimState,
    build_sim,
    fresh_state,
    read_state,
    state_file,
    write_state,
)
from fabtui.workspace import simfabric


def sim_state(s: Settings, *, restart: bool = False) -> tuple[Path, SimState]:
    """The running demo fabric (`simfabric.sim_state`), said on stderr when it is not healthy."""
    switched = simfabric.switch_notice(s)  # before the state switches
    path, state = simfabric.sim_state(s, restart=restart)
    if switched:
        click.echo(switched, err=True)
    else:
        _announce(state)
    return path, state


def _announce(state: SimState) -> None:
    message = simfabric.unhealthy_notice(state)
    if message:
        notice_once(message)


@click.group("sim")
def sim() -> None:
    """The simulated demo fabric: scenarios, clock, fault injection, device programs."""


@sim.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def list_scenarios(as_json: bool) -> None:
    """List the fault scenarios the demo fabric can play."""
    rows = []
    for name, path in sorted(scenario_files([shipped_scenarios()]).items()):
        scenario = load_scenario(path).scenario
        rows.append({"name": name, "faults": len(scenario.timeline),
                     "description": scenario.description})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from fabtui.cli.render import table, terminal_width

    # Sized to the longest name (pfc-storm-stall-prevention ran into its description).
    click.echo(table(["scenario", "description"],
                     [(row["name"], row["description"]) for row in rows], terminal_width()))


@sim.command("show")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def show(ctx: click.Context, name: str | None, as_json: bool) -> None:
    """Show a scenario's timeline (default: the one in play) and what it should trip."""
    s = settings(ctx)
    running = read_state(state_file(s.data_dir)) if name is None and not s.scenario_chosen \
        else None
    path = running.scenario if running is not None and running.scenario.is_file() else \
        find_scenario(name or s.scenario)
    loaded = load_scenario(path)
    scenario = loaded.scenario
    if as_json:
        click.echo(json.dumps(scenario.model_dump(mode="json"), indent=2))
        return
    click.echo(f"{scenario.name}: {scenario.description}")
    click.echo(f"  duration {_clock(scenario.duration)}, a fresh demo joins at "
               f"{_clock(scenario.start)}; workload {scenario.workload.job} "
               f"(step {scenario.workload.step_s:g}s, NIC load "
               f"{scenario.workload.utilization:.0%})")
    if not scenario.timeline:
        click.echo("  timeline: nothing happens (a healthy fabric)")
    for spec in scenario.timeline:
        until = f" until {_clock(spec.until)}" if spec.until is not None else ""
        params = " ".join(f"{k}={v}" for k, v in spec.params.items())
        click.echo(f"  at {_clock(spec.at)}{until}: {spec.fault.value} on {spec.component}"
                   f"{'  ' + params if params else ''}")
    for key, value in scenario.expect.items():
        click.echo(f"  expect {key}: {value}")


@sim.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """What the running demo fabric plays, its clock, and the faults in effect now."""
    s = _simulated(ctx)
    path, state = sim_state(s)
    simulation = build_sim(state)
    now = state.now()
    active = [f for f in simulation.faults if f.active(now)]
    info: dict[str, Any] = {
        "state_file": str(path), "topology": str(state.topology),
        "scenario": simulation.scenario.name, "time_s": round(now, 1), "speed": state.speed,
        "active": [{"fault": f.kind.value, "component": f.spec.component} for f in active],
        "injected": len(state.injected),
        "upcoming": [{"fault": f.kind.value, "component": f.spec.component, "at": f.spec.at}
                     for f in simulation.faults if f.spec.at > now],
    }
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"scenario {info['scenario']} at {_clock(now)} (speed x{state.speed:g}); "
               f"state {path}")
    for fault in info["active"]:
        click.echo(f"  active: {fault['fault']} on {fault['component']}")
    for fault in info["upcoming"]:
        click.echo(f"  upcoming at {_clock(fault['at'])}: {fault['fault']} on "
                   f"{fault['component']}")
    if not info["active"] and not info["upcoming"]:
        click.echo("  no faults in effect")


@sim.command("start")
@click.option("--at", "at", metavar="TIME", help="Join the timeline here (e.g. 25m; default: the "
              "scenario's own start).")
@click.option("--speed", type=float, default=1.0, show_default=True,
              help="Simulation seconds per real second.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def start(ctx: click.Context, at: str | None, speed: float, as_json: bool) -> None:
    """(Re)start the demo fabric: injected faults go, the clock restarts. Without --scenario it
    plays the configured scenario (healthy unless the config names one): the way back from a
    scenario that kept playing; `fabtui --scenario X sim start` restarts X."""
    from fabtui.config import with_scenario

    # The scenario it plays brings its own fabric (the RoCE demo for `healthy`), not the one
    # the running demo had.
    s = _simulated(ctx)
    s = with_scenario(s, s.scenario, chosen=s.scenario_chosen)
    path = state_file(s.data_dir)
    running = read_state(path)
    scenario = find_scenario(s.scenario)
    offset = _seconds(at, "--at") if at is not None else None
    if speed <= 0:
        raise UserError("--speed must be above 0")
    state = fresh_state(s.topology, scenario, list(s.template_dirs), speed=speed, at=offset)
    build_sim(state)
    write_state(path, state)
    was = running.scenario.stem if running is not None else None
    back = f" (was {was}: back to {scenario.stem})" if was and was != scenario.stem else ""
    _say(as_json, f"demo fabric playing {scenario.stem} from {_clock(state.now())}{back}",
         {"scenario": scenario.stem, "time_s": round(state.now(), 1), "speed": speed,
          "state_file": str(path)})


@sim.command("inject")
@click.argument("fault", type=click.Choice([k.value for k in FaultKind]))
@click.argument("component")
@click.option("--in", "delay", default="0", show_default=True, metavar="TIME",
              help="Start after this long (e.g. 30s, 2m).")
@click.option("--for", "length", metavar="TIME", help="End after this long (default: lasts).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Fault parameter (repeatable), e.g. ramp_s=600 or with=mlx5_3.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def inject(ctx: click.Context, fault: str, component: str, delay: str, length: str | None,
           params: tuple[str, ...], as_json: bool) -> None:
    """Add a fault to the running demo fabric now (game days). `fabtui sim clear` removes it."""
    s = _simulated(ctx)
    running = sim_state(s)
    values: dict[str, Any] = {k: _number(v) for k, v in key_values(params, "--param").items()}
    done = simfabric.add_fault(s, fault, component, delay_s=_seconds(delay, "--in"),
                               length_s=_seconds(length, "--for") if length is not None else None,
                               params=values, running=running)
    when = "now" if done.at <= done.now else f"at {_clock(done.at)}"
    _say(as_json, f"injected {fault} on {component} {when}"
         f"{f' for {length}' if length else ''} (scenario clock {_clock(done.now)})",
         {"fault": fault, "component": component, "at": done.at, "until": done.until,
          "params": done.params, "time_s": round(done.now, 1), "injected": done.injected})


@sim.command("repair")
@click.argument("component")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def repair_command(ctx: click.Context, component: str, as_json: bool) -> None:
    """Record that COMPONENT was fixed now (an optic swapped, a cable replaced): its faults end."""
    ended = simfabric.repair(_simulated(ctx), component)
    _say(as_json, f"repaired {component}: ended {', '.join(ended)}" if ended else
         f"repaired {component} (no fault was active on it)",
         {"component": component, "ended": ended})


@sim.command("clear")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def clear(ctx: click.Context, as_json: bool) -> None:
    """Remove every injected fault (the scenario's own timeline stays)."""
    s = _simulated(ctx)
    path, state = sim_state(s)
    count = len(state.injected)
    write_state(path, state.model_copy(update={"injected": []}))
    _say(as_json, f"removed {count} injected fault{'s' if count != 1 else ''}",
         {"removed": count, "scenario": state.scenario.stem})


@sim.command("switch")
@click.argument("name")
@click.pass_context
def switch(ctx: click.Context, name: str) -> None:
    """Log in to a simulated switch's CLI in this terminal (as `ssh -tt` would)."""
    _become_device(ctx, "switch", name, [])


@sim.command("node", context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
@click.pass_context
def node(ctx: click.Context, name: str, command: tuple[str, ...]) -> None:
    """Run one command on a simulated node (as `ssh NODE COMMAND` would)."""
    _become_device(ctx, "node", name, ["--", *command])


def _say(as_json: bool, text: str, data: dict[str, Any]) -> None:
    """A command's result: one line for people, or JSON for scripts."""
    click.echo(json.dumps(data, indent=2) if as_json else text)


def _become_device(ctx: click.Context, kind: str, name: str, extra: list[str]) -> None:
    """Replace this process with the simulated device program (the terminal is handed over)."""
    path, state = sim_state(_simulated(ctx))
    graph = build_sim(state).graph
    known = graph.switches if kind == "switch" else graph.nodes
    if name not in known:
        raise UserError(f"no {kind} {name!r} in {state.topology} (there are "
                        f"{', '.join(sorted(known)[:4])}{', ...' if len(known) > 4 else ''})")
    from fabtui.sim.transports import device_argv

    argv = [*device_argv(path, kind, name), *extra]
    sys.stdout.flush()
    os.execv(argv[0], argv)


def _simulated(ctx: click.Context) -> Settings:
    s = settings(ctx)
    if not s.simulated:
        raise UserError(f"{s.topology} is a real fabric (simulate = false in the config); "
                        "the sim commands work on the demo fabric")
    return s


def _seconds(text: str, option: str) -> float:
    try:
        value = parse_duration(text)
        return float(value)
    except (ValueError, TypeError):
        raise UserError(f"{option} {text!r}: expected a duration such as 90, 30s, 5m, 1h") \
            from None


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else \
        f"{rest // 60}:{rest % 60:02d}"


@sim.command("hang-logs")
@click.argument("outdir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--case", "case", required=True, metavar="CASE",
              help="Which hung job (see docs/triage-sim.md): optic, victim-first-watchdog, ...")
@click.option("--ranks", type=int, required=True, help="Job size: 8 to 1024, 8 per node.")
@click.option("--nccl", default="2.21", show_default=True, help="NCCL release, 2.18 to 2.27.")
@click.option("--torch", "torch_release", default=None,
              help="PyTorch release 2.1, 2.4 or 2.6 (default: the one shipped with --nccl).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--topology", "topology", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Topology (default: the configured one, or the 1,024-GPU "
                                 "template when the job is bigger).")
@click.option("--bytes-per-rank", type=int, default=0,
              help="Pad each rank's log with iterations up to about this size.")
@click.option("--fr/--no-fr", "flight_recorder", default=True, help="Flight Recorder dumps.")
@click.option("--ras/--no-ras", "ras", default=None, help="ncclras output (NCCL 2.24+).")
@click.option("--combined/--no-combined", default=True, help="Write job.log too.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
@click.pass_context
def hang_logs(ctx: click.Context, outdir: Path, case: str, ranks: int, nccl: str,
              torch_release: str | None, seed: int, topology: Path | None, bytes_per_rank: int,
              flight_recorder: bool, ras: bool | None, combined: bool, as_json: bool) -> None:
    """Write the logs of a simulated hung job, and expected.json with the answer."""
    from fabtui.cli.context import workspace
    from fabtui.sim.hangjob import JobSpec, SpecError, generate
    from fabtui.topology.loader import shipped_template

    space = workspace(ctx)
    if topology is None and ranks > len(space.graph().ranks):
        topology = shipped_template("h100-1024gpu-rail")
    spec = JobSpec(case=case, ranks=ranks, nccl=nccl, torch=torch_release, seed=seed,
                   flight_recorder=flight_recorder, ras=ras, bytes_per_rank=max(0, bytes_per_rank),
                   combined=combined)
    try:
        manifest = generate(outdir, spec, space.graph(topology))
    except SpecError as exc:
        raise UserError(str(exc)) from None
    culprits = manifest["culprits"]
    named = "none named" if culprits is None else \
        ", ".join(map(str, culprits[:8])) + (" ..." if len(culprits) > 8 else "")
    _say(as_json, f"{outdir}: {case}, {ranks} ranks, NCCL {manifest['nccl']}, PyTorch "
                  f"{manifest['torch']}: {manifest['verdict']} (culprits {named})", manifest)


@sim.command("exporter")
@click.option("--port", type=click.IntRange(0, 65535), default=9464, show_default=True,
              help="TCP port to serve on (0: any free port, printed).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--print-scrape-config", "print_config", is_flag=True,
              help="Print the Prometheus scrape_configs for this exporter and exit.")
@click.option("--json", "as_json", is_flag=True,
              help="Say where it serves as one JSON line on standard output.")
@click.pass_context
def exporter(ctx: click.Context, port: int, host: str, print_config: bool,
             as_json: bool) -> None:
    """Serve the demo fabric as dcgm-exporter, node_exporter and SONiC exporter metrics."""
    from fabtui.sim.exporter import Exporter, scrape_config

    if print_config:
        click.echo("scrape_configs:\n" + scrape_config("fabtui-sim", f"{host}:{port}"), nl=False)
        return
    path, _state = sim_state(_simulated(ctx))
    try:
        server = Exporter(path, port, host)
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    if as_json:
        base = f"http://{host}:{server.port}"
        click.echo(json.dumps({"url": base, "paths": ["/metrics/dcgm", "/metrics/node",
                                                      "/metrics/switch", "/metrics"]}))
        sys.stdout.flush()
    click.echo(f"serving the demo fabric on http://{host}:{server.port}/metrics/{{dcgm,node,"
               f"switch}} (Ctrl-C stops; `fabtui sim exporter --print-scrape-config` gives "
               "Prometheus's scrape config)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server.server_close()
