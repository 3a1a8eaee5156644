/**
 * The dashboards as shipped (`dashboards/*.json`) and their queries: what the parse, catalogue
 * and end-to-end tests run, with Grafana's variables replaced by values Prometheus accepts.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DASHBOARDS, renderDashboard } from "../../../tools/dashboards/index.js";

export const DASHBOARD_DIR = fileURLToPath(new URL("../../../dashboards/", import.meta.url));

/** The part of Grafana's dashboard JSON model the tests read. */
export interface DashboardJson {
  readonly uid: string;
  readonly title: string;
  readonly panels: readonly PanelJson[];
  readonly templating: { readonly list: readonly VariableJson[] };
}

export interface PanelJson {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly datasource?: { readonly type?: string; readonly uid?: string };
  readonly gridPos: {
    readonly x: number;
    readonly y: number;
    readonly w: number;
    readonly h: number;
  };
  readonly targets?: readonly TargetJson[];
  /** A row's panels when it is collapsed. */
  readonly panels?: readonly PanelJson[];
}

export interface TargetJson {
  readonly refId: string;
  readonly expr: string;
  readonly instant?: boolean;
  readonly range?: boolean;
  readonly datasource?: { readonly type?: string; readonly uid?: string };
}

export interface VariableJson {
  readonly name: string;
  readonly type: string;
  readonly query?: unknown;
  readonly definition?: string;
  readonly regex?: string;
  readonly allValue?: string;
  readonly multi?: boolean;
  readonly includeAll?: boolean;
  readonly datasource?: { readonly type?: string; readonly uid?: string };
}

/** One query of one panel. */
export interface PanelQuery {
  readonly dashboard: string;
  readonly panel: string;
  readonly panelId: number;
  readonly refId: string;
  readonly expr: string;
  readonly instant: boolean;
}

/** The committed dashboards, by file name. */
export function loadDashboards(): { file: string; json: DashboardJson }[] {
  return DASHBOARDS.map(({ file }) => ({
    file,
    json: JSON.parse(readFileSync(DASHBOARD_DIR + file, "utf8")) as DashboardJson,
  }));
}

/** The dashboards as `tools/dashboards` generates them (equal to the committed ones when the
 * generation test passes), by file name. */
export function generatedDashboards(): { file: string; json: DashboardJson }[] {
  return DASHBOARDS.map(({ file, build }) => ({
    file,
    json: JSON.parse(renderDashboard(build())) as DashboardJson,
  }));
}

/** Every panel, those inside collapsed rows included. */
export function allPanels(dashboard: DashboardJson): PanelJson[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** Every query of every panel of `dashboard`. */
export function panelQueries(dashboard: DashboardJson): PanelQuery[] {
  return allPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((t) => ({
      dashboard: dashboard.uid,
      panel: panel.title,
      panelId: panel.id,
      refId: t.refId,
      expr: t.expr,
      instant: t.instant === true,
    })),
  );
}

/** The query variables that choose projects, in order. */
export const FLEET_VARIABLE_NAMES = ["account", "org", "region", "project"] as const;

/**
 * Values for Grafana's variables: the intervals and the range; and what the fleet variables put
 * in a query (default `.*`, which matches every project).
 */
export interface Substitutions {
  readonly rateInterval: string;
  readonly interval: string;
  readonly range: string;
  readonly fleet?: Partial<Record<(typeof FLEET_VARIABLE_NAMES)[number], string>>;
}

/**
 * `expr` with Grafana's variables replaced: the intervals and the range, and the fleet variables
 * (`$project`, `$account`, …) by `values.fleet` or `.*`. Throws when a variable is left (a
 * `label_replace` group reference such as `$1` is no variable).
 */
export function substitute(expr: string, values: Substitutions): string {
  let out = expr
    .replaceAll("$__rate_interval", values.rateInterval)
    .replaceAll("$__interval", values.interval)
    .replaceAll("$__range", values.range);
  for (const name of FLEET_VARIABLE_NAMES) {
    out = out.replaceAll(`$${name}`, values.fleet?.[name] ?? ".*");
  }
  if (/\$(?!\d)/.test(out)) throw new Error(`a variable is left in ${out}`);
  return out;
}

/** The query variables of `dashboard`, in order. */
export function queryVariables(dashboard: DashboardJson): VariableJson[] {
  return dashboard.templating.list.filter((v) => v.type === "query");
}
