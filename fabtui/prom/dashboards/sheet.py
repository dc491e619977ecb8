"""One dashboard being laid out with Grafana's foundation SDK: its variables, rows and panels
(ids and grid positions given in order), links to its siblings, and what the tests may expect
of each panel. Pure: builds SDK objects, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus as prom
from grafana_foundation_sdk.builders import stat as stat_panel
from grafana_foundation_sdk.builders import table as table_panel
from grafana_foundation_sdk.builders import timeseries
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import prometheus as pm

from fabtui.prom.dashboards.site import (
    JOB_LABEL,
    NCCL_JOB,
    NCCL_RANK,
    Site,
)

TAG = "fabtui"
"""Every generated dashboard carries this tag: the dashboards' links list their siblings by
it."""
DATASOURCE = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")
"""Every panel and variable queries the Prometheus the `datasource` variable picks."""
WIDTH = 24
UID_PREFIX = "fabtui-"


def uid(name: str) -> str:
    """A dashboard's uid (`fabtui-gpu`): stable, so links and provisioning find it."""
    return UID_PREFIX + name


@dataclass(frozen=True)
class Target:
    """One query of a panel: PromQL and its legend."""

    expr: str
    legend: str = ""


@dataclass
class Sheet:
    """A dashboard in the making (see the module docstring)."""

    site: Site
    name: str
    title: str
    description: str
    variables: Sequence[str]
    """Which of the shared variables it shows (`VARIABLES` keys, in order)."""
    builder: db.Dashboard = field(init=False)
    nonzero: set[str] = field(default_factory=set)
    """Titles of panels whose data must hold a non-zero value on a fabric at work (traffic,
    pause under congestion, FEC corrections)."""
    _next_id: int = 1
    _x: int = 0
    _y: int = 0
    _row_h: int = 0

    def __post_init__(self) -> None:
        self.builder = (db.Dashboard(f"{self.title} ({self.site.cluster})").uid(uid(self.name))
                        .description(self.description).tags([TAG]).refresh("30s")
                        .time("now-1h", "now").timezone("browser")
                        .tooltip(dm.DashboardCursorSync.CROSSHAIR)
                        .link(db.DashboardLink("fabtui dashboards")
                              .type(dm.DashboardLinkType.DASHBOARDS).tags([TAG])
                              .as_dropdown(True).include_vars(True).keep_time(True)))
        for name in self.variables:
            self.builder.with_variable(VARIABLES[name](self.site))

    def row(self, title: str) -> None:
        """Start a new row of panels under a heading."""
        self._newline()
        self.builder.with_row(db.Row(title).id(self._take_id())
                              .grid_pos(dm.GridPos(h=1, w=WIDTH, x=0, y=self._y)))
        self._y += 1

    def graph(self, title: str, targets: Sequence[Target], *, unit: str = "short",
              description: str = "", nonzero: bool = False, width: int = 12,
              links: Sequence[tuple[str, str]] = ()) -> None:
        """A time series panel."""
        # Lines, not points; a scrape missed under load does not break a line.
        panel = timeseries.Panel().unit(unit).line_width(1).fill_opacity(10) \
            .show_points(common.VisibilityMode.NEVER).span_nulls(True)
        self._add(panel, title, targets, description, nonzero, width, 8, links)

    def stat(self, title: str, targets: Sequence[Target], *, unit: str = "short",
             description: str = "", nonzero: bool = False, width: int = 6) -> None:
        """A single-number panel (its query's latest value per series)."""
        panel = stat_panel.Panel().unit(unit)
        self._add(panel, title, targets, description, nonzero, width, 4, ())

    def table(self, title: str, targets: Sequence[Target], *, description: str = "",
              links: Sequence[tuple[str, str]] = (), width: int = 12) -> None:
        """A table of the latest value per series, one column per label."""
        panel = table_panel.Panel().align(common.FieldTextAlignment.AUTO).inspect(False)
        self._add(panel, title, targets, description, False, width, 8, links, instant=True)

    def _add(self, panel: timeseries.Panel | stat_panel.Panel | table_panel.Panel, title: str,
             targets: Sequence[Target], description: str, nonzero: bool, width: int,
             height: int, links: Sequence[tuple[str, str]], *, instant: bool = False) -> None:
        if self._x + width > WIDTH:
            self._newline()
        panel.id(self._take_id()).title(title).datasource(DATASOURCE).grid_pos(
            dm.GridPos(h=height, w=width, x=self._x, y=self._y))
        if description:
            panel.description(description)
        for index, target in enumerate(targets):
            query = prom.Dataquery().expr(target.expr).ref_id(chr(ord("A") + index)) \
                .datasource(DATASOURCE)
            if target.legend:
                query.legend_format(target.legend)
            if instant:
                query.instant().format(pm.PromQueryFormat.TABLE)
            panel.with_target(query)
        if links:
            panel.data_links([db.DashboardLink(text).url(url) for text, url in links])
        self.builder.with_panel(panel)
        if nonzero:
            self.nonzero.add(title)
        self._x += width
        self._row_h = max(self._row_h, height)

    def _newline(self) -> None:
        if self._x:
            self._y += self._row_h
        self._x = self._row_h = 0

    def _take_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1


def link_to(name: str, **variables: str) -> str:
    """A data link's URL to sibling dashboard `name`, setting `variables` (values may be
    `${__field.labels.X}`) and keeping the time range and the other variables' values."""
    keep = "&".join(f"${{{v}:queryparam}}" for v in ("datasource", "job")
                    if v not in variables)
    given = "&".join(f"var-{k}={v}" for k, v in variables.items())
    return f"/d/{uid(name)}?{given}&{keep}&${{__url_time_range}}"


# the shared variables -----------------------------------------------------------------------
def _datasource(_site: Site) -> db.DatasourceVariable:
    return db.DatasourceVariable("datasource").label("Prometheus").type("prometheus")


def _query(name: str, label: str, query: str, *, multi: bool = True,
           regex: str = "") -> db.QueryVariable:
    variable = (db.QueryVariable(name).label(label).datasource(DATASOURCE).query(query)
                .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
                .sort(dm.VariableSort.NATURAL_ASC).multi(multi).include_all(True)
                .all_value(".*"))
    if regex:
        variable.regex(regex)
    return variable


def _job(site: Site) -> db.QueryVariable:
    return _query("job", "Slurm job",
                  f"label_values({site.metric('dcgm.temperature')}, {JOB_LABEL})", multi=False)


def _node(site: Site) -> db.QueryVariable:
    # The job's nodes (all nodes when the job is All); host_pattern takes the topology name
    # out of the label's value, as the Prometheus source does.
    return _query("node", "node",
                  f"label_values({site.metric('dcgm.temperature')}"
                  f"{{{JOB_LABEL}=~\"$job\"}}, {site.labels.gpu_node})",
                  regex=f"/{site.labels.host_pattern}/")


def _rank(site: Site) -> db.QueryVariable:
    return _query("rank", "rank", f"label_values({site.metric('nccl.busbw')}"
                                  f"{{{NCCL_JOB}=~\"$job\"}}, {NCCL_RANK})")


def _rail(site: Site) -> db.CustomVariable:
    # One option per rail of the topology, its value the regex of the rail's NIC devices:
    # a custom variable cannot be multi-valued here (Grafana would escape the `|`), so "all"
    # is an option of its own.
    options = [("all", ".+")] + [(f"rail {r.number}", "|".join(r.devices))
                                 for r in site.rails]
    return (db.CustomVariable("rail").label("rail")
            .values(",".join(f"{text} : {value}" for text, value in options))
            .current(dm.VariableOption(selected=True, text=options[0][0],
                                       value=options[0][1]))
            .options([dm.VariableOption(selected=i == 0, text=t, value=v)
                      for i, (t, v) in enumerate(options)]))


def _switch(site: Site) -> db.QueryVariable:
    return _query("switch", "switch",
                  f"label_values({site.metric('sonic.oper_status')}, {site.labels.switch})",
                  regex=f"/{site.labels.host_pattern}/")


def _port(site: Site) -> db.QueryVariable:
    return _query("port", "port",
                  f"label_values({site.series('sonic.oper_status', site.switch_is())}, "
                  f"{site.labels.port})")


VARIABLES = {"datasource": _datasource, "job": _job, "node": _node, "rank": _rank,
             "rail": _rail, "switch": _switch, "port": _port}
"""Every dashboard's variables come from here, so a link carrying `var-node=...` means the
same on each."""
