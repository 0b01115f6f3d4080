// Prints where a .cpuprofile spent its samples: top functions by self time, and self time per package or folder.
// Run: node dist/bench/report/cpu-profile-summary.js <file.cpuprofile> [top]
import { readFileSync } from "node:fs";

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
};
type Profile = { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

/** "undici", "src/informer", "node:internal", "(garbage collector)"…: where a frame's code lives. */
function area(url: string, name: string): string {
  if (url === "") return name.startsWith("(") ? name : "(native)";
  if (url.startsWith("node:")) return url.split("/").slice(0, 2).join("/");
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  const own = /\/dist\/((?:src|bench)\/[^/]+)/.exec(url);
  return own ? (own[1] as string) : url;
}

const file = process.argv[2];
if (!file) throw new Error("usage: cpu-profile-summary <file.cpuprofile> [top]");
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<number, number>();
for (const [i, id] of profile.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const functions = new Map<string, number>();
const areas = new Map<string, number>();
for (const [id, us] of selfUs) {
  const frame = byId.get(id)?.callFrame;
  if (!frame) continue;
  const where =
    frame.url === "" ? "" : ` ${frame.url.replace(/^.*\/(node_modules|dist)\//, "$1/")}:${frame.lineNumber + 1}`;
  const key = `${frame.functionName || "(anonymous)"}${where}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
  const a = area(frame.url, frame.functionName);
  areas.set(a, (areas.get(a) ?? 0) + us);
}
const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
const idle = selfUs.size > 0 ? (functions.get("(idle)") ?? 0) : 0;
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled, ${((total - idle) / 1e6).toFixed(2)} s busy`);
console.log("\nself time by area:");
for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, 15)) console.log(`  ${pct(us)}  ${a}`);
console.log(`\ntop ${top} functions by self time:`);
for (const [key, us] of [...functions].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(us)}  ${key}`);
