// Memory per cached pod: realistic Istio pods (as the API server sends them) through the facts transform
// into the store, against keeping the parsed Pod objects themselves (what a stock informer caches).
// Run: node --expose-gc dist/bench/cache-memory.js [pods]
import { presetRule } from "../src/detect/presets.js";
import type { Rule } from "../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../src/detect/to-pod-facts.js";
import { PodStore } from "../src/informer/pod-store.js";
import { istioPodJson } from "../test/unit/detect/raw-pod-fixture.js";

const pods = Number(process.argv[2] ?? 50_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");

const rules = ["istio", "linkerd"].map((name) => presetRule(name) as Rule);
const schema = factsSchema(rules, { labelKeys: ["cni.istio.io/uninitialized"] });

/** Each pod as its own JSON text, parsed separately like watch events, with unique names and UIDs. */
function* wirePods(count: number): Generator<unknown> {
  const template = istioPodJson();
  for (let i = 0; i < count; i++) {
    const pod = structuredClone(template);
    pod.metadata.name = `reviews-v1-7d9f8b6c5-${i.toString(36).padStart(5, "0")}`;
    pod.metadata.uid = `0b5c3f6e-6a43-4c59-9d1f-${i.toString(16).padStart(12, "0")}`;
    pod.metadata.namespace = `ns-${i % 200}`;
    pod.metadata.resourceVersion = String(1000 + i);
    yield JSON.parse(JSON.stringify(pod));
  }
}

function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

function measure(label: string, fill: () => unknown): number {
  const before = heapUsed();
  const kept = fill();
  const perPod = (heapUsed() - before) / pods;
  console.log(`${label.padEnd(28)} ${Math.round(perPod).toString().padStart(7)} bytes/pod`);
  return (kept as { size: number }).size === pods ? perPod : Number.NaN;
}

const facts = measure("compact facts (PodStore)", () => {
  const store = new PodStore();
  for (const pod of wirePods(pods)) {
    const f = toPodFacts(pod, schema);
    if (f) store.upsert(f);
  }
  return store;
});
const whole = measure("whole Pod objects (Map)", () => {
  const map = new Map<number, unknown>();
  let i = 0;
  for (const pod of wirePods(pods)) map.set(i++, pod);
  return map;
});
console.log(`pods: ${pods}; whole objects take ${(whole / facts).toFixed(1)}x the memory of compact facts`);
