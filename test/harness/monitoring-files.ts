// The shipped monitoring files: the dashboard's panel queries and the alerting rules, read from their one source
// (charts/cni-repair/files/); manifests/monitoring holds copies that make manifests writes, and the kustomize objects.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadYaml } from "@kubernetes/client-node";
import { repositoryFile } from "./binaries.js";

/** The files the chart and manifests/monitoring both ship; the chart's copy is the one edited. */
export const MONITORING_SOURCES = ["alerts.yaml", "dashboard.json"] as const;

/** charts/cni-repair/files/<name>: the source of alerts.yaml and dashboard.json. */
export function monitoringSource(name: (typeof MONITORING_SOURCES)[number]): string {
  return repositoryFile(join("charts", "cni-repair", "files", name));
}

/** manifests/monitoring/, found from the compiled location (dist/test/harness) or the source one. */
export function monitoringDir(): string {
  let dir = fileURLToPath(new URL(".", import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, "manifests", "monitoring");
    if (existsSync(join(candidate, "kustomization.yaml"))) return candidate;
    dir = join(dir, "..");
  }
  throw new Error("cannot find manifests/monitoring above the test harness");
}

export type AlertRule = {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels: { readonly severity: string } & Record<string, string>;
  readonly annotations: Record<string, string>;
};

/** The alerting rules of alerts.yaml, every group's. */
export function readAlertRules(): AlertRule[] {
  const file = loadYaml<{ groups: { rules: AlertRule[] }[] }>(readFileSync(monitoringSource("alerts.yaml"), "utf8"));
  return file.groups.flatMap((group) => group.rules);
}

export type DashboardTarget = { readonly refId: string; readonly expr: string; readonly datasource?: { uid?: string } };
export type DashboardPanel = {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { h: number; w: number; x: number; y: number };
  readonly targets?: DashboardTarget[];
  readonly panels?: DashboardPanel[];
};
export type DashboardVariable = {
  readonly name: string;
  readonly type: string;
  readonly query?: unknown;
  readonly includeAll?: boolean;
  readonly multi?: boolean;
};
export type Dashboard = {
  readonly uid: string;
  readonly title: string;
  readonly panels: DashboardPanel[];
  readonly templating: { list: DashboardVariable[] };
};

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(monitoringSource("dashboard.json"), "utf8")) as Dashboard;
}

/** Every panel, rows' nested panels included, except the rows themselves. */
export function dashboardPanels(dashboard: Dashboard): DashboardPanel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).filter((panel) => panel.type !== "row");
}

/** Each panel query as "panel title / refId" and its expression. */
export function dashboardQueries(dashboard: Dashboard): { name: string; expr: string }[] {
  return dashboardPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ name: `${panel.title} / ${target.refId}`, expr: target.expr })),
  );
}

export type VariableValues = {
  /** Each multi-value variable's values, as Grafana expands them inside =~: (a|b). */
  readonly clusters: readonly string[];
  readonly jobs: readonly string[];
  readonly namespaces: readonly string[];
  readonly pods: readonly string[];
  /** What Grafana puts in for $__rate_interval and $__range. */
  readonly rateInterval: string;
  readonly range: string;
};

/** Replaces the dashboard variables the way Grafana does before it sends a query. */
export function substituteVariables(expr: string, values: VariableValues): string {
  const regexEscape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\\\$&");
  const multi = (list: readonly string[]) => `(${list.map(regexEscape).join("|")})`;
  return expr
    .replaceAll("$__rate_interval", values.rateInterval)
    .replaceAll("$__range", values.range)
    .replaceAll("$cluster", multi(values.clusters))
    .replaceAll("$job", multi(values.jobs))
    .replaceAll("$namespace", multi(values.namespaces))
    .replaceAll("$pod", multi(values.pods));
}

/** Whether a panel query reads the metric family (a histogram through its _bucket, _sum or _count series). */
export function dashboardShows(dashboard: Dashboard, family: string): boolean {
  const name = new RegExp(`(?<![\\w:])${family}(?:_bucket|_sum|_count)?(?![\\w:])`);
  return dashboardQueries(dashboard).some((query) => name.test(query.expr));
}

/** The metric families docs/metrics.md lists under "Deliberately unpanelled" (lines "- `name`: why"). */
export function unpanelledMetrics(metricsReference: string): string[] {
  const section = metricsReference.split(/^## /m).find((part) => part.startsWith("Deliberately unpanelled"));
  if (!section) throw new Error('docs/metrics.md has no "## Deliberately unpanelled" section');
  return [...section.matchAll(/^- `([a-zA-Z_:][\w:]*)`/gm)].map((match) => match[1] ?? "");
}

/** The families a /metrics text exposes, from its "# TYPE name type" lines. */
export function exposedFamilies(exposition: string): string[] {
  return [...exposition.matchAll(/^# TYPE (\S+) \S+$/gm)].map((match) => match[1] ?? "");
}

/** Why each family is missing from the dashboard and the unpanelled list, as what to do about it (empty: none). */
export function unaccountedMetrics(
  families: readonly string[],
  dashboard: Dashboard,
  unpanelled: readonly string[],
): string[] {
  return families
    .filter((family) => !dashboardShows(dashboard, family) && !unpanelled.includes(family))
    .map(
      (family) =>
        `${family} is exported but in no panel of charts/cni-repair/files/dashboard.json and not in docs/metrics.md's ` +
        `"Deliberately unpanelled" list: add a panel query that reads it (then make manifests), or add the line ` +
        `"- \`${family}\`: <why no panel>" to that list.`,
    );
}

/** The metric selectors of an expression (`name{labels}` or a bare name), for the metrics we ship. */
export function metricSelectors(expr: string): string[] {
  const found = expr.matchAll(/\b((?:cni_repair|process|nodejs)_\w+|up(?=\{))(\{[^}]*\})?/g);
  return [...new Set([...found].map((match) => `${match[1]}${match[2] ?? ""}`))];
}
