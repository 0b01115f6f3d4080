// docs/operations.md's permission table against the chart's rendered RBAC, both ways, in every mode and with each
// optional value that adds grants: every grant rendered has its row (in the right place, "cluster-wide" or the
// Role's namespace, with a cell that says it applies), every row whose cell says it applies is rendered, and every
// row is rendered somewhere. Generic on purpose: a grant added to, or dropped from, any template fails it until the
// table says so.
import { expect } from "chai";
import { permissionTable } from "../../docs/permission-table.js";
import { renderChart } from "../../harness/helm.js";
import {
  controllerGrants,
  OVERLAYS,
  type Overlay,
  type Rendered,
  rolesNotBoundToController,
} from "../../harness/overlays.js";

/** The values a case renders with, as the table's footnotes speak of them. */
type ChartCase = {
  readonly name: string;
  readonly presets: readonly string[];
  readonly startupTaint?: "bootstrap-only" | "continuous";
  readonly istioRepair?: "ignore";
  /** Modes the case does not apply to (continuous needs every node in view: not per-node). */
  readonly notIn?: readonly Overlay[];
};

const CASES: readonly ChartCase[] = [
  { name: "the defaults", presets: ["istio"] },
  {
    name: "startup taints (bootstrap-only) and every preset",
    presets: ["istio", "linkerd", "istio-ambient"],
    startupTaint: "bootstrap-only",
  },
  { name: "startup taints (continuous)", presets: ["istio"], startupTaint: "continuous", notIn: ["per-node"] },
  { name: "istioRepair: ignore, istio-ambient alone", presets: ["istio-ambient"], istioRepair: "ignore" },
];

/** What each cell marker of the table means (its legend under the table), for a case. */
const MARKERS: Readonly<Record<string, (c: ChartCase) => boolean>> = {
  "✓": () => true,
  "–": () => false,
  "✓¹": (c) => c.startupTaint !== undefined,
  "✓²": (c) => c.presets.includes("istio-ambient"),
  "✓³": (c) => c.presets.includes("istio") && c.istioRepair !== "ignore",
};

const applies = (cell: string, c: ChartCase, line: string): boolean => {
  const meaning = MARKERS[cell];
  if (!meaning) throw new Error(`unknown cell "${cell}" (known: ${Object.keys(MARKERS).join(" ")}) in: ${line}`);
  return meaning(c);
};

const renders = new Map<string, Promise<Rendered>>();
const render = (mode: Overlay, c: ChartCase): Promise<Rendered> => {
  const key = `${mode} ${c.name}`;
  const values: Record<string, string> = {
    presets: `{${c.presets.join(",")}}`,
    ...(c.startupTaint && { "startupTaint.mode": c.startupTaint }),
    ...(c.istioRepair && { istioRepair: c.istioRepair }),
  };
  const rendered = renders.get(key) ?? renderChart(mode, values);
  renders.set(key, rendered);
  return rendered;
};

describe("docs/operations.md: the permission table is the chart's RBAC", function () {
  // The first call may build helm (cached afterwards).
  this.timeout(20 * 60_000);
  const rows = permissionTable();

  for (const mode of OVERLAYS) {
    for (const c of CASES.filter((c) => !c.notIn?.includes(mode))) {
      it(`${mode}, ${c.name}: the rendered grants are exactly the rows that apply`, async () => {
        const rendered = await render(mode, c);
        expect(rolesNotBoundToController(rendered), "roles rendered but not bound to the controller").to.deep.equal([]);
        const expected = rows.filter((row) => applies(row.cells[mode], c, row.line)).flatMap((row) => row.grants);
        const actual = controllerGrants(rendered);
        expect(
          actual.filter((grant) => !expected.includes(grant)),
          "rendered, but no row of the table says so",
        ).to.deep.equal([]);
        expect(
          [...new Set(expected)].filter((grant) => !actual.includes(grant)).sort(),
          "a row says so, but not rendered",
        ).to.deep.equal([]);
      });
    }
  }

  it("every row is rendered in some mode, and no row repeats a grant of another", async () => {
    const everything = new Set<string>();
    for (const mode of OVERLAYS) {
      for (const c of CASES.filter((c) => !c.notIn?.includes(mode))) {
        for (const grant of controllerGrants(await render(mode, c))) everything.add(grant);
      }
    }
    for (const row of rows) {
      expect(
        row.grants.filter((grant) => !everything.has(grant)),
        `never rendered: ${row.line}`,
      ).to.deep.equal([]);
    }
    const all = rows.flatMap((row) => row.grants);
    expect(all.filter((grant, i) => all.indexOf(grant) !== i)).to.deep.equal([]);
  });
});
