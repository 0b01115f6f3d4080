// The permission table of docs/operations.md ("Permissions per mode"), read as data: each row's grants as
// "where: verb group/resource[/subresource] [name]" strings (the shape access-review.ts's permissionsOf gives), and
// what its cell says for each mode (the marker: ✓, –, or ✓ with a footnote number).
import { readFileSync } from "node:fs";
import { repositoryFile } from "../harness/binaries.js";
import { OVERLAYS, type Overlay } from "../harness/overlays.js";

export type PermissionRow = {
  /** The row as written, for messages. */
  readonly line: string;
  /** "cluster-wide: get core/pods", "istio-system: get core/configmaps istio-cni-config", … */
  readonly grants: readonly string[];
  /** Each mode's cell, as written ("✓", "–", "✓¹", …). */
  readonly cells: Readonly<Record<Overlay, string>>;
};

const HEADING = "## Permissions per mode";
const HEADER = ["resource", "verbs", "names", "where", ...OVERLAYS, "why"];

/** Every `backticked` item of a cell. */
const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");

/** kubectl's "resource[.group][/subresource]" as "group/resource[/subresource]" ("core" for the core group). */
function apiResource(notation: string): string {
  const [resourceAndGroup = "", subresource] = notation.split("/");
  const dot = resourceAndGroup.indexOf(".");
  const resource = dot < 0 ? resourceAndGroup : resourceAndGroup.slice(0, dot);
  const group = dot < 0 ? "core" : resourceAndGroup.slice(dot + 1);
  return `${group}/${resource}${subresource ? `/${subresource}` : ""}`;
}

/** The table's rows; throws naming the row when one cannot be read. */
export function permissionTable(
  markdown: string = readFileSync(repositoryFile("docs/operations.md"), "utf8"),
): PermissionRow[] {
  const section = markdown.slice(markdown.indexOf(HEADING));
  if (!section.startsWith(HEADING)) throw new Error(`docs/operations.md has no "${HEADING}"`);
  const lines = section.split("\n");
  const headerAt = lines.findIndex((line) => line.startsWith("| resource |"));
  const header = (lines[headerAt] ?? "")
    .split("|")
    .slice(1, -1)
    .map((cell) => cell.trim());
  if (header.join(",") !== HEADER.join(",")) {
    throw new Error(`the permission table's header is "${header.join(" | ")}", expected "${HEADER.join(" | ")}"`);
  }
  const rows: PermissionRow[] = [];
  for (const line of lines.slice(headerAt + 2)) {
    if (!line.startsWith("|")) break;
    const [resources = "", verbs = "", names = "", where = "", ...rest] = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    const resourceList = backticked(resources);
    const verbList = verbs.split(",").map((verb) => verb.trim());
    const nameList = names === "any" ? [""] : backticked(names);
    const scope = where === "cluster-wide" ? where : backticked(where)[0];
    if (!resourceList.length || !verbList.every(Boolean) || !nameList.length || !scope) {
      throw new Error(`cannot read the permission table's row: ${line}`);
    }
    const grants = resourceList.flatMap((resource) =>
      verbList.flatMap((verb) =>
        nameList.map((name) => `${scope}: ${verb} ${apiResource(resource)}${name && ` ${name}`}`),
      ),
    );
    const cells = Object.fromEntries(OVERLAYS.map((mode, i) => [mode, rest[i] ?? ""])) as Record<Overlay, string>;
    rows.push({ line, grants, cells });
  }
  if (!rows.length) throw new Error("the permission table has no rows");
  return rows;
}
