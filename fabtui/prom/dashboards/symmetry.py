"""The fabric symmetry dashboard: rail against rail and leaf against leaf.

A rail-optimized fabric is symmetric by design: every rail carries the same share of a job's
traffic, every leaf has as many uplinks up and pauses as little as its siblings. A rail or
leaf out of line with the others is where to look first. The per-rail queries are generated
from the topology (which NIC devices and leaves make each rail, which leaf ports are uplinks):
the exporters' series carry no rail label.
"""

from __future__ import annotations

from collections.abc import Callable

from fabtui.prom.dashboards.sheet import Sheet, Target, link_to
from fabtui.prom.dashboards.site import Site, alternatives, host_regex
from fabtui.prom.dashboards.switch import pause_share


def _uplinks(site: Site, leaves: tuple[str, ...], by: str = "") -> str:
    """How many of `leaves`' uplinks are up (`by` a label: per leaf)."""
    terms = [site.series("sonic.oper_status", f'{site.labels.switch}=~"{host_regex((leaf,))}"',
                         f'{site.labels.port}=~"{alternatives(site.uplinks[leaf])}"')
             for leaf in leaves if site.uplinks.get(leaf)]
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} ({' or '.join(terms)})" if terms else ""


def symmetry(site: Site) -> Sheet:
    sheet = Sheet(site, "symmetry", "Fabric symmetry",
                  "Rail against rail and leaf against leaf: in a healthy rail-optimized fabric "
                  "the lines lie on top of each other; one out of line is where to look. "
                  "Generated from the topology by `fabtui prom dashboards`.",
                  ("datasource", "job", "switch"))
    leaves_in = site.leaves_of(site.leaves)
    sw, port = site.labels.switch, site.labels.port

    def per_rail(build: Callable[[str], str], *, nics: bool) -> list[Target]:
        """One query per rail: `build` of the matcher selecting the rail's NICs (`nics`) or
        its leaves."""
        targets = []
        for rail in site.rails:
            if nics:
                where = f'{site.labels.nic}=~"{alternatives(rail.devices)}"'
            elif rail.leaves:
                where = site.leaves_of(rail.leaves)
            else:
                continue
            targets.append(Target(build(where), f"rail {rail.number}"))
        return targets

    sheet.row("Rail against rail")
    sheet.graph("NIC transmit per rail", per_rail(
        lambda w: f"8 * sum({site.rate('ethtool.tx_bytes_phy', w)})", nics=True), unit="bps",
        nonzero=True,
                description="Sum over the rail's NICs: a rail carrying less than its siblings "
                            "holds the job back (a slow or erroring NIC, a degraded leaf).")
    sheet.graph("NIC receive per rail", per_rail(
        lambda w: f"8 * sum({site.rate('ethtool.rx_bytes_phy', w)})", nics=True), unit="bps",
        nonzero=True)
    sheet.graph("Most paused NIC per rail", per_rail(
        lambda w: f"1e-6 * max({site.rate('ethtool.rx_prio3_pause_duration', w)})",
        nics=True), unit="percentunit", nonzero=True,
        description="The largest share of time a NIC of the rail was paused by its leaf.")
    paused = (("sonic.pfc_tx", "pausing its peer"), ("sonic.pfc_rx", "paused by its peer"))

    def most_paused(key: str) -> Callable[[str], str]:
        return lambda w: f"max({pause_share(site, key, w, f'{sw}, {port}')})"

    sheet.graph("Most paused leaf port per rail", [
        Target(target.expr, f"{target.legend} {what}") for key, what in paused
        for target in per_rail(most_paused(key), nics=False)],
        unit="percentunit", nonzero=True,
        description="The largest share of time a port of the rail's leaves held its peer "
                    "paused (a congested leaf) or was held paused by it (a storming NIC, a "
                    "congested spine).")
    sheet.graph("FEC-corrected codewords per rail", per_rail(
        lambda w: f"sum({site.rate('sonic.fec_corr', w)})", nics=False), unit="ops",
        nonzero=True)
    uplinks = [Target(text, f"rail {rail.number}") for rail in site.rails
               if (text := _uplinks(site, rail.leaves))]
    if uplinks:
        sheet.graph("Leaf uplinks up per rail", uplinks, nonzero=True,
                    description="A rail with fewer uplinks up than its siblings has lost "
                                "capacity toward the spines (traffic leaving the rail: "
                                "alltoall without PXN, storage, other jobs).")
    sheet.graph("Leaf ports down per rail", per_rail(
        lambda w: f"sum(1 - {site.series('sonic.oper_status', w)})", nics=False))

    sheet.row("Leaf against leaf")
    to_switch = [("Ports of ${__field.labels.switch}",
                  link_to("switch", switch="${__field.labels.switch}"))]
    sheet.graph("Transmit per leaf", [Target(site.named(
        f"8 * sum by ({sw}) ({site.rate('sonic.tx_bytes', leaves_in)})", "switch"),
        "{{switch}}")], unit="bps", nonzero=True, links=to_switch)
    sheet.graph("Most paused port per leaf", [Target(site.named(
        f"max by ({sw}) ({pause_share(site, key, leaves_in, f'{sw}, {port}')})", "switch"),
        f"{{{{switch}}}} {what}") for key, what in paused], unit="percentunit", nonzero=True,
        links=to_switch)
    per_leaf = _uplinks(site, site.leaves, sw)
    if per_leaf:
        sheet.graph("Uplinks up per leaf", [Target(site.named(per_leaf, "switch"),
                                                   "{{switch}}")], nonzero=True,
                    links=to_switch)
    sheet.graph("FEC-corrected codewords per leaf", [Target(site.named(
        f"sum by ({sw}) ({site.rate('sonic.fec_corr', leaves_in)})", "switch"),
        "{{switch}}")], unit="ops", nonzero=True, links=to_switch)

    sheet.row("A leaf's ports against each other")
    mine = site.switch_is()
    legend = f"{{{{switch}}}} {{{{{port}}}}}"
    sheet.graph("Transmit per port", [Target(site.named(
        f"8 * sum by ({sw}, {port}) ({site.rate('sonic.tx_bytes', mine)})", "switch"),
        legend)], unit="bps", nonzero=True)
    sheet.graph("Pause share per port", [Target(site.named(
        pause_share(site, key, mine, f"{sw}, {port}"), "switch"), f"{legend} {what}")
        for key, what in paused], unit="percentunit", nonzero=True)
    return sheet
