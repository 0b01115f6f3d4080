// Property tests on oversized input: a pod with thousands of unrelated init statuses, labels and annotations,
// very long strings and deeply nested junk in fields no rule reads gets the same facts and verdict as the pod
// without them, and neither toPodFacts nor detect throws (or recurses into the junk).

import { expect } from "chai";
import fc from "fast-check";
import { detect } from "../../../src/detect/detect.js";
import type { PodFacts } from "../../../src/detect/facts.js";
import { factsSchema, sameFacts, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { allRules, podFacts, rawPod, rawPodFrom, ruleKeys } from "./arbitraries.js";

const schema = factsSchema(allRules, { labelKeys: ["app"] });

/** Nested arrays this deep would overflow the stack of any code that walks them recursively. */
function deepJunk(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { nested: value };
  return value;
}

type Bulk = { statuses: number; keys: number; stringLength: number; at: number; depth: number };

const bulk: fc.Arbitrary<Bulk> = fc.record({
  statuses: fc.integer({ min: 1_000, max: 3_000 }),
  keys: fc.integer({ min: 500, max: 1_000 }),
  stringLength: fc.integer({ min: 10_000, max: 100_000 }),
  at: fc.nat({ max: 3_000 }),
  depth: fc.integer({ min: 10_000, max: 20_000 }),
});

/** A copy of the pod with the bulk mixed in where no rule looks. */
function inflate(pod: unknown, size: Bulk): unknown {
  const copy = structuredClone(pod) as Record<string, unknown>;
  const long = "x".repeat(size.stringLength);
  const filler = (n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`noise.example/k${i}`, i % 7 === 0 ? long : `v${i}`]));
  const metadata = copy.metadata as Record<string, unknown> | undefined;
  if (metadata && typeof metadata === "object" && !Array.isArray(metadata)) {
    if (isRecord(metadata.labels)) metadata.labels = { ...filler(size.keys), ...metadata.labels };
    if (isRecord(metadata.annotations)) metadata.annotations = { ...filler(size.keys), ...metadata.annotations };
    metadata.managedFields = deepJunk(size.depth);
  }
  const status = copy.status as Record<string, unknown> | undefined;
  if (status && typeof status === "object" && !Array.isArray(status)) {
    if (Array.isArray(status.initContainerStatuses)) {
      const extra = Array.from({ length: size.statuses }, (_, i) => ({
        name: `sidecar-${i}`,
        state: { terminated: { exitCode: 126, message: long } },
        lastState: { terminated: { exitCode: 95 } },
      }));
      status.initContainerStatuses.splice(size.at, 0, ...extra);
    }
    status.containerStatuses = deepJunk(size.depth);
    status.conditions = Array.from({ length: size.statuses }, (_, i) => ({ type: `c${i}`, message: long }));
  }
  return copy;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

describe("detection on huge input (properties)", function () {
  // Megabytes of input per run: slower than the other unit tests, on a busy machine much slower.
  this.timeout(30_000);

  it("none of the bulk is a key or container name a rule reads (guards the generator)", () => {
    for (const name of ["noise.example/k0", "sidecar-0"]) expect(ruleKeys.has(name)).to.equal(false);
  });

  it("thousands of unrelated statuses, keys, long strings and deep nesting change neither facts nor verdict", () => {
    fc.assert(
      fc.property(fc.oneof(podFacts.map(rawPodFrom), rawPod), bulk, (pod, size) => {
        const before = toPodFacts(pod, schema);
        const after = toPodFacts(inflate(pod, size), schema);
        if (before === undefined) {
          expect(after).to.equal(undefined);
          return;
        }
        expect(after).to.not.equal(undefined);
        expect(sameFacts(before, after as PodFacts)).to.equal(true);
        expect(detect(after as PodFacts, allRules)).to.deep.equal(detect(before, allRules));
      }),
      { numRuns: 25 },
    );
  });

  it("a pod made only of huge arrays, in every field a rule reads, never makes toPodFacts or detect throw", () => {
    const huge = fc.integer({ min: 1_000, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => i));
    const field = fc.oneof(huge, fc.constant(deepJunk(20_000)), fc.string({ maxLength: 5 }));
    const shaped = fc.record({
      metadata: fc.record({
        namespace: field,
        name: field,
        uid: field,
        resourceVersion: field,
        labels: field,
        annotations: field,
        ownerReferences: field,
      }),
      spec: fc.record({ nodeName: field, restartPolicy: field, initContainers: field }),
      status: fc.record({ phase: field, initContainerStatuses: field }),
    });
    fc.assert(
      fc.property(shaped, (pod) => {
        const facts = toPodFacts(pod, schema);
        if (facts !== undefined) detect(facts, allRules);
      }),
      { numRuns: 40 },
    );
  });
});
