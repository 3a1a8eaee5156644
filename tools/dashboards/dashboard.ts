/**
 * What both dashboards share: the `$datasource` and `$project` variables, the time settings,
 * the links between them, and stable panel ids.
 *
 * They are classic (schema v1) dashboards, built with the SDK's `DashboardBuilder`: that is the
 * JSON model every Grafana since 8 imports and provisions from files. The SDK marks it deprecated
 * in favour of `dashboardv2`, which only Grafana 12 with its new-layouts feature understands.
 */
import * as dashboard from "@grafana/grafana-foundation-sdk/dashboard";
import { DATASOURCE } from "./panels.js";

/** The tag both dashboards carry; their links list the dashboards with it. */
export const TAG = "pgcp-exporter";

/** The series the `$project` variable's values come from: every watched project has one. */
export const PROJECT_VARIABLE_QUERY = "label_values(pgcp_project_up, project)";

// eslint-disable-next-line @typescript-eslint/no-deprecated -- see the file comment
export type Dashboard = dashboard.Dashboard;
// eslint-disable-next-line @typescript-eslint/no-deprecated -- see the file comment
export type DashboardBuilder = dashboard.DashboardBuilder;

/** A dashboard with the shared variables, settings and links; panels are added by the caller. */
export function newDashboard(options: {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
}): DashboardBuilder {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- see the file comment
  return new dashboard.DashboardBuilder(options.title)
    .uid(options.uid)
    .description(options.description)
    .tags([TAG])
    .editable()
    .timezone("browser")
    .time({ from: "now-6h", to: "now" })
    .refresh("1m")
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .withVariable(
      new dashboard.DatasourceVariableBuilder("datasource")
        .label("Data source")
        .type("prometheus")
        .description("The Prometheus that scrapes pgcp-exporter."),
    )
    .withVariable(
      new dashboard.QueryVariableBuilder("project")
        .label("Project")
        .description(
          "Projects the exporter watches. Panels of families without a project label (durations, API, notifier) show every project.",
        )
        .datasource(DATASOURCE)
        .query(PROJECT_VARIABLE_QUERY)
        .definition(PROJECT_VARIABLE_QUERY)
        .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
        .sort(dashboard.VariableSort.AlphabeticalAsc)
        .multi(true)
        .includeAll(true)
        .allValue(".*")
        .current({ selected: true, text: ["All"], value: ["$__all"] }),
    )
    .annotation(
      // Grafana's own annotations and alerts, which Grafana adds to a dashboard that lacks them.
      new dashboard.AnnotationQueryBuilder()
        .builtIn(1)
        .name("Annotations & Alerts")
        .type("dashboard")
        .datasource({ type: "grafana", uid: "-- Grafana --" })
        .enable(true)
        .hide(true)
        .iconColor("rgba(0, 211, 255, 1)"),
    )
    .link(
      new dashboard.DashboardLinkBuilder("pgcp-exporter")
        .type(dashboard.DashboardLinkType.Dashboards)
        .tags([TAG])
        .asDropdown(false)
        .includeVars(true)
        .keepTime(true),
    );
}

/**
 * The built dashboard with panel ids 1, 2, … in layout order (rows included), so that the
 * JSON stays the same from one generation to the next and links to a panel keep working.
 */
export function finish(builder: DashboardBuilder): Dashboard {
  const built = builder.build();
  // The SDK puts links and annotation toggles in Grafana 12's controls menu; without a
  // placement every Grafana shows them above the panels.
  for (const link of built.links ?? []) delete link.placement;
  for (const annotation of built.annotations.list ?? []) delete annotation.placement;
  let id = 0;
  for (const panel of built.panels ?? []) {
    panel.id = ++id;
    if ("panels" in panel) for (const inner of panel.panels) inner.id = ++id;
  }
  return built;
}
