"""`fabtui sim ...`: the demo fabric's scenarios, its clock, and game-day fault injection."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from fabtui.cli.context import UserError, settings
from fabtui.config import Settings
from fabtui.durations import parse_duration
from fabtui.errors import InputError
from fabtui.sim.scenario import (
    FaultKind,
    FaultSpec,
    find_scenario,
    load_scenario,
    scenario_files,
    shipped_scenarios,
)
from fabtui.sim.state import (
    build_sim,
    fresh_state,
    read_state,
    repair,
    state_file,
    write_state,
)
from fabtui.workspace.simfabric import sim_state


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
    for row in rows:
        click.echo(f"{row['name']:<26}{row['description']}")


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
@click.pass_context
def start(ctx: click.Context, at: str | None, speed: float) -> None:
    """(Re)start the demo fabric on its scenario: the clock restarts, injected faults go."""
    s = _simulated(ctx)
    path = state_file(s.data_dir)
    running = read_state(path)
    scenario = running.scenario if running is not None and not s.scenario_chosen and \
        running.scenario.is_file() else find_scenario(s.scenario)
    offset = _seconds(at, "--at") if at is not None else None
    if speed <= 0:
        raise UserError("--speed must be above 0")
    state = fresh_state(s.topology, scenario, list(s.template_dirs), speed=speed, at=offset)
    build_sim(state)
    write_state(path, state)
    click.echo(f"demo fabric playing {scenario.stem} from {_clock(state.now())}")


@sim.command("inject")
@click.argument("fault", type=click.Choice([k.value for k in FaultKind]))
@click.argument("component")
@click.option("--in", "delay", default="0", show_default=True, metavar="TIME",
              help="Start after this long (e.g. 30s, 2m).")
@click.option("--for", "length", metavar="TIME", help="End after this long (default: lasts).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Fault parameter (repeatable), e.g. ramp_s=600 or with=mlx5_3.")
@click.pass_context
def inject(ctx: click.Context, fault: str, component: str, delay: str, length: str | None,
           params: tuple[str, ...]) -> None:
    """Add a fault to the running demo fabric now (game days). `fabtui sim clear` removes it."""
    s = _simulated(ctx)
    path, state = sim_state(s)
    now = state.now()
    begin = now + _seconds(delay, "--in")
    end = begin + _seconds(length, "--for") if length is not None else None
    values: dict[str, Any] = {}
    for item in params:
        key, sep, value = item.partition("=")
        if not sep:
            raise UserError(f"--param {item!r}: expected key=value")
        values[key.strip()] = _number(value)
    spec = FaultSpec(fault=FaultKind(fault), component=component, at=begin, until=end,
                     params=values)
    trial = state.model_copy(update={"injected": [*state.injected, spec]})
    try:
        build_sim(trial)
    except InputError as exc:
        reason = exc.problems[-1].message.split(": ", 1)[-1]
        raise UserError(f"cannot inject {fault} on {component}: {reason}") from None
    write_state(path, trial)
    when = "now" if begin <= now else f"at {_clock(begin)}"
    click.echo(f"injected {fault} on {component} {when}"
               f"{f' for {length}' if length else ''} (scenario clock {_clock(now)})")


@sim.command("repair")
@click.argument("component")
@click.pass_context
def repair_command(ctx: click.Context, component: str) -> None:
    """Record that COMPONENT was fixed now (an optic swapped, a cable replaced): its faults end."""
    s = _simulated(ctx)
    path, state = sim_state(s)
    simulation = build_sim(state)
    link = simulation.link_of(component)
    hit = [f for f in simulation.faults if f.active(state.now()) and (
        f.spec.component == component or f.host == component or
        (link is not None and f.link == link))]
    repair(path, component)
    if hit:
        click.echo(f"repaired {component}: ended {', '.join(f.kind.value for f in hit)}")
    else:
        click.echo(f"repaired {component} (no fault was active on it)")


@sim.command("clear")
@click.pass_context
def clear(ctx: click.Context) -> None:
    """Remove every injected fault (the scenario's own timeline stays)."""
    s = _simulated(ctx)
    path, state = sim_state(s)
    count = len(state.injected)
    write_state(path, state.model_copy(update={"injected": []}))
    click.echo(f"removed {count} injected fault{'s' if count != 1 else ''}")


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


def _become_device(ctx: click.Context, kind: str, name: str, extra: list[str]) -> None:
    """Replace this process with the simulated device program (the terminal is handed over)."""
    path, _ = sim_state(_simulated(ctx))
    from fabtui.transports.sim import device_argv

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
