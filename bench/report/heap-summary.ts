// Prints what a .heapsnapshot holds: self size and count per node type and constructor name, largest first.
// Run: node dist/bench/report/heap-summary.js <file.heapsnapshot> [top]
import { readFileSync } from "node:fs";

type Snapshot = {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] }; node_count: number };
  nodes: number[];
  strings: string[];
};

const file = process.argv[2];
if (!file) throw new Error("usage: heap-summary <file.heapsnapshot> [top]");
const top = Number(process.argv[3] ?? 25);
const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
const fields = snap.snapshot.meta.node_fields;
const width = fields.length;
const typeAt = fields.indexOf("type");
const nameAt = fields.indexOf("name");
const sizeAt = fields.indexOf("self_size");
const types = snap.snapshot.meta.node_types[0];

const groups = new Map<string, { bytes: number; count: number }>();
let total = 0;
for (let i = 0; i < snap.nodes.length; i += width) {
  const type = types[snap.nodes[i + typeAt] as number] ?? "?";
  const raw = snap.strings[snap.nodes[i + nameAt] as number] ?? "";
  // Strings and code are grouped by type only: their "names" are their contents.
  const name = type === "object" || type === "closure" || type === "native" ? raw : "";
  const key = `${type}${name ? ` ${name.slice(0, 60)}` : ""}`;
  const bytes = snap.nodes[i + sizeAt] as number;
  const group = groups.get(key) ?? { bytes: 0, count: 0 };
  group.bytes += bytes;
  group.count++;
  groups.set(key, group);
  total += bytes;
}
console.log(`${file}: ${(total / 2 ** 20).toFixed(1)} MB in ${snap.snapshot.node_count} nodes`);
for (const [key, { bytes, count }] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)) {
  console.log(`  ${(bytes / 2 ** 20).toFixed(2).padStart(8)} MB  ${String(count).padStart(8)}  ${key}`);
}
