"""`fabtui alerts ...`: Alertmanager's alerts as fabric incidents — the webhook receiver, the
incident list, one incident's account, closing one by hand, and its silences (through the
typed gate)."""

from __future__ import annotations

import json
import shlex

import click

from fabtui.cli.context import EXIT_BAD_INPUT, UserError, workspace


@click.group("alerts")
def alerts() -> None:
    """Alertmanager's alerts as fabric incidents: receive, list, show, silence."""


@alerts.command("serve")
@click.option("--listen", default="127.0.0.1:9095", show_default=True, metavar="HOST:PORT",
              help="Where Alertmanager's webhook posts (webhook_configs url: "
                   "http://HOST:PORT/alerts).")
@click.option("--json", "as_json", is_flag=True,
              help="Log one JSON object a line ({\"at\", \"line\"}) for a log shipper.")
@click.pass_context
def serve(ctx: click.Context, listen: str, as_json: bool) -> None:
    """Receive Alertmanager's webhook and turn its alerts into incidents (runs until
    stopped). Every notification is one log line on stderr; incidents go to the alerts
    journal in the data folder, where `fabtui alerts list` and the app read them."""
    import time

    from fabtui.alerts.present import summary
    from fabtui.alerts.receiver import AlertReceiver
    from fabtui.workspace.alerting import Receiver

    host, _, port_text = listen.rpartition(":")
    if not host or not port_text.isdigit():
        raise UserError(f"--listen {listen!r}: HOST:PORT, such as 127.0.0.1:9095")

    def log(line: str) -> None:
        if as_json:
            click.echo(json.dumps({"at": time.time(), "line": line}), err=True)
        else:
            click.echo(f"{time.strftime('%H:%M:%S')} fabtui alerts: {line}", err=True)

    ws = workspace(ctx)
    receiver = Receiver(ws, log)
    try:
        server = AlertReceiver(receiver.receive, log, host, int(port_text),
                               listing=lambda: [summary(i) for i in
                                                receiver.book.open_incidents()])
    except OSError as exc:
        raise UserError(f"--listen {listen}: {exc.strerror or exc}") from None
    receiver.warm()  # the running jobs asked of Slurm now, not on the first alert
    opened = len(receiver.book.open_incidents())
    log(f"listening on http://{server.address}/alerts ({opened} open incident(s) in "
        f"{receiver.book.journal.path})")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log("stopped")
    finally:
        server.server.server_close()


@alerts.command("list")
@click.option("--all", "show_all", is_flag=True,
              help="Resolved, merged and hand-closed incidents too.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def list_incidents(ctx: click.Context, show_all: bool, as_json: bool) -> None:
    """The open incidents, newest first (with --all, every incident)."""
    from fabtui.alerts.present import HEADERS, row, summary
    from fabtui.cli.render import table, terminal_width

    book = workspace(ctx).alerts
    found = sorted(book.incidents.values(), key=lambda i: -i.opened_at) if show_all else \
        book.open_incidents()
    if as_json:
        click.echo(json.dumps([summary(i) for i in found], indent=2))
        return
    if not found:
        click.echo("no open incidents" if not show_all else "no incidents")
        return
    click.echo(table(HEADERS, [row(i) for i in found], terminal_width()))


@alerts.command("show")
@click.argument("incident")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.option("--alertmanager", metavar="URL", help="The Alertmanager the suggested silences "
              "name (default: the one that sent the alerts).")
@click.pass_context
def show(ctx: click.Context, incident: str, as_json: bool, alertmanager: str | None) -> None:
    """One incident: the suspect first, its blast radius, the runbook to run, similar cases,
    the alerts it explains and the silences it suggests."""
    from fabtui.alerts.present import account, summary
    from fabtui.workspace.alerting import find_incident

    found = find_incident(workspace(ctx).alerts, incident)
    if as_json:
        click.echo(json.dumps(summary(found), indent=2))
        return
    click.echo("\n".join(account(found, alertmanager)))


@alerts.command("close")
@click.argument("incident")
@click.option("--reason", required=True, metavar="TEXT",
              help="Why it is closed (journaled with who closed it, and when).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def close(ctx: click.Context, incident: str, reason: str, as_json: bool) -> None:
    """Close an open incident by hand (fixed, or not a fault): it leaves `alerts list` (shown
    with --all); its alerts resolving do not reopen it, only one firing again does."""
    from fabtui.alerts.present import summary, when
    from fabtui.errors import RequestError
    from fabtui.workspace.alerting import close_incident
    from fabtui.workspace.operator import operator_name

    try:
        closed = close_incident(workspace(ctx), incident, reason, operator_name())
    except RequestError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        click.echo(json.dumps(summary(closed), indent=2))
    else:
        click.echo(f"closed {closed.id} ({closed.suspect}) by {closed.closed_by} at "
                   f"{when(closed.resolved_at or 0.0)}: {closed.close_reason}")


@alerts.command("silence")
@click.argument("incident")
@click.option("--confirm", "typed", metavar="SUSPECT",
              help="Type the incident's suspect element to apply its silences.")
@click.option("--alertmanager", metavar="URL", help="Where to send them (default: the "
              "Alertmanager that sent the alerts).")
@click.option("--hours", type=click.FloatRange(0.05, 168), default=2.0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def silence(ctx: click.Context, incident: str, typed: str | None, alertmanager: str | None,
            hours: float, as_json: bool) -> None:
    """Apply the silences an incident suggests, after typing its suspect (journaled: the
    request before it is sent, the silence ids after). Without --confirm, at a terminal,
    asks for it; otherwise prints what would be silenced and exits 2."""
    import os

    from fabtui.alerts.silence import gate_phrase, suggest
    from fabtui.cli.danger import interactive
    from fabtui.errors import RequestError
    from fabtui.workspace.alerting import apply_silences, find_incident

    ws = workspace(ctx)
    found = find_incident(ws.alerts, incident)
    phrase = gate_phrase(found)
    url = alertmanager or found.alertmanager or "http://ALERTMANAGER:9093"
    commands = [spec.amtool(url) for spec in suggest(found, hours * 3600)]
    if not as_json:
        for command in commands:
            click.echo(command)
    if typed is None:
        if as_json:  # a script: what would be silenced, nothing asked
            click.echo(json.dumps({"incident": found.id, "suggested": commands,
                                   "applied": []}, indent=2))
        if as_json or not interactive():
            click.echo(f"not applied: a silence hides alerts, it fixes nothing. Add --confirm "
                       f"{shlex.quote(phrase)} (or run it at a terminal and type it)", err=True)
            ctx.exit(EXIT_BAD_INPUT)
        typed = click.prompt(f"Type {phrase} to apply these silences", default="",
                             show_default=False, err=True)
    author = os.environ.get("USER", "") or "fabtui"
    try:
        ids = apply_silences(ws, found, typed, author=f"{author} (fabtui)",
                             alertmanager=alertmanager, duration_s=hours * 3600)
    except RequestError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        click.echo(json.dumps({"incident": found.id, "suggested": commands, "applied": ids},
                              indent=2))
    else:
        click.echo(f"silenced: {', '.join(ids)} (journaled in incident {found.id})")
