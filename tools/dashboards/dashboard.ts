/**
 * What both dashboards share: the `$datasource` variable and the chained `$account`, `$org`,
 * `$region` and `$project` variables, the time settings, the links between them, and stable
 * panel ids.
 *
 * They are classic (schema v1) dashboards, built with the SDK's `DashboardBuilder`: that is the
 * JSON model every Grafana since 8 imports and provisions from files. The SDK marks it deprecated
 * in favour of `dashboardv2`, which only Grafana 12 with its new-layouts feature understands.
 */
import * as dashboard from "@grafana/grafana-foundation-sdk/dashboard";
import { DATASOURCE } from "./panels.js";
import type { SeriesName } from "./promql.js";

/** The tag both dashboards carry; their links list the dashboards with it. */
export const TAG = "pgcp-exporter";

/** The series the fleet variables read: one per watched project once it was read. */
const INFO: SeriesName = "pgcp_project_info";
/** One series per watched project, read or not. */
const UP: SeriesName = "pgcp_project_up";

/** A query variable of the dashboards, as Grafana's classic Prometheus variable query takes it. */
export interface FleetVariable {
  readonly name: "account" | "org" | "region" | "project";
  readonly label: string;
  readonly description: string;
  /** `label_values(<selector>, <label>)` or `query_result(<expression>)`. */
  readonly query: string;
  /**
   * Grafana's regex over each answer: with the named groups `text` (shown) and `value` (put in
   * the queries), a name beside each id. For `query_result`, each answer is a series as Grafana
   * writes it: `{label="value",…} <value> <timestamp>`.
   */
  readonly regex?: string;
  /**
   * What "All" puts in the queries; without it, every value the variable lists (so that "All"
   * follows the variables before it).
   */
  readonly allValue?: string;
}

/**
 * The variables that choose projects, in their order on the dashboard: each is chained to the
 * ones before it, and the panels follow `$project` (or `$account`, see `sel`). "All" of the
 * first three is `.*`, which also matches an empty label (a personal project has no
 * organisation); "All" of `$project` is the projects it lists, so that choosing an account, an
 * organisation or a region restricts the panels too. A project not read yet (right after a
 * start, or one the API does not know or refuses: its account, organisation and region are
 * unknown) is listed whatever they say, by its id.
 */
export const FLEET_VARIABLES: readonly FleetVariable[] = [
  {
    name: "account",
    label: "Account",
    description: "The configured accounts (API keys) the projects are watched under.",
    query: `label_values(${INFO}, account)`,
    allValue: ".*",
  },
  {
    name: "org",
    label: "Organisation",
    description:
      "Organisations of the projects of the chosen accounts, by name (by id until the name is read). All includes personal projects, which have none.",
    query: `query_result(max by (org_id, org_name) (${INFO}{account=~"$account", org_id!=""}))`,
    regex: '/org_name="(?<text>[^"]+)|org_id="(?<value>[^"]+)/g',
    allValue: ".*",
  },
  {
    name: "region",
    label: "Region",
    description: "Regions of the projects of the chosen accounts and organisations.",
    query: `label_values(${INFO}{account=~"$account", org_id=~"$org"}, region_id)`,
    allValue: ".*",
  },
  {
    name: "project",
    label: "Project",
    description:
      "Projects of the chosen accounts, organisations and regions, by name; a project not read yet is listed by its id whatever they say. Panels of families without a project label (durations, API, notifier) show every project.",
    query:
      `query_result(max by (project, name) (${INFO}{account=~"$account", org_id=~"$org", region_id=~"$region"})` +
      ` or max by (project) (${UP} unless on (project) ${INFO}))`,
    regex: '/name="(?<text>[^"]+)|project="(?<value>[^"]+)/g',
  },
];

function queryVariable(variable: FleetVariable) {
  const builder = new dashboard.QueryVariableBuilder(variable.name)
    .label(variable.label)
    .description(variable.description)
    .datasource(DATASOURCE)
    .query(variable.query)
    .definition(variable.query)
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
    .sort(dashboard.VariableSort.AlphabeticalCaseInsensitiveAsc)
    .multi(true)
    .includeAll(true)
    .current({ selected: true, text: ["All"], value: ["$__all"] });
  if (variable.regex !== undefined) builder.regex(variable.regex);
  if (variable.allValue !== undefined) builder.allValue(variable.allValue);
  return builder;
}

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
  const builder = new dashboard.DashboardBuilder(options.title)
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
    );
  for (const variable of FLEET_VARIABLES) builder.withVariable(queryVariable(variable));
  return builder
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
