// Property tests: toPodFacts and detect never throw, and verdicts depend only on the documented fields.

import { isDeepStrictEqual } from "node:util";
import { expect } from "chai";
import fc from "fast-check";
import { detect } from "../../../src/detect/detect.js";
import type { PodFacts } from "../../../src/detect/facts.js";
import { factsSchema, sameFacts, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { allRules, anyValue, noise, podFacts, rawPod, rawPodFrom, ruleKeys } from "./arbitraries.js";

const schema = factsSchema(allRules, { labelKeys: ["app"] });
const rulesInAnyOrder = fc.shuffledSubarray([...allRules]);

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What every PodFacts toPodFacts makes must look like, whatever the input. */
function expectWellFormed(f: PodFacts): void {
  for (const key of ["namespace", "name", "uid", "resourceVersion"] as const) {
    expect(f[key]).to.be.a("string").and.not.equal("");
  }
  expect(f.deleting).to.be.a("boolean");
  expect(Object.keys(f.labels).every((k) => schema.labelKeys.includes(k))).to.equal(true);
  expect(Object.keys(f.annotations).every((k) => schema.annotationKeys.includes(k))).to.equal(true);
  expect(Object.values({ ...f.labels, ...f.annotations }).every((v) => typeof v === "string")).to.equal(true);
  const names = f.initContainers.map((c) => c.name);
  expect(new Set(names).size).to.equal(names.length);
  for (const c of f.initContainers) {
    expect(schema.initContainers).to.include(c.name);
    for (const t of [c.state, c.lastTermination]) {
      if (typeof t === "object") expect(Number.isInteger(t.exitCode)).to.equal(true);
    }
  }
}

/** Deep-freezes facts so a mutating detect would throw (ESM is strict mode). */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe("detection properties", () => {
  it("toPodFacts and detect never throw on anything", () => {
    fc.assert(
      fc.property(anyValue, rulesInAnyOrder, (input, rules) => {
        const facts = toPodFacts(input, schema);
        if (facts !== undefined) detect(facts, rules);
      }),
      { numRuns: 2000 },
    );
  });

  it("on pod-shaped input with wrong-typed fields, toPodFacts never throws and yields well-formed facts", () => {
    fc.assert(
      fc.property(rawPod, rulesInAnyOrder, (input, rules) => {
        const facts = toPodFacts(input, schema);
        if (facts === undefined) return;
        expectWellFormed(facts);
        detect(facts, rules);
      }),
      { numRuns: 2000 },
    );
  });

  it("toPodFacts of a valid pod gives back its facts, less the keys and containers no rule reads", () => {
    fc.assert(
      fc.property(podFacts, (facts) => {
        // Keys no rule compares by value are kept by presence only, as "".
        const onlyIn = (r: Readonly<Record<string, string>>, keys: readonly string[]) =>
          Object.fromEntries(
            Object.entries(r)
              .filter(([k]) => keys.includes(k))
              .map(([k, v]) => [k, schema.valueKeys.has(k) ? v : ""]),
          );
        expect(toPodFacts(rawPodFrom(facts), schema)).to.deep.equal({
          ...facts,
          labels: onlyIn(facts.labels, schema.labelKeys),
          annotations: onlyIn(facts.annotations, schema.annotationKeys),
          initContainers: facts.initContainers.filter((c) => schema.initContainers.includes(c.name)),
        });
      }),
      { numRuns: 1000 },
    );
  });

  it("labels, annotations and init statuses no rule reads, and resourceVersion, change neither facts nor verdict", () => {
    fc.assert(
      // Valid pods (many broken) and pod-shaped ones with wrong-typed fields.
      fc.property(fc.oneof(podFacts.map(rawPodFrom), rawPod), noise, rulesInAnyOrder, (pod, extra, rules) => {
        const noisy = structuredClone(pod) as Record<string, unknown>;
        const metadata = noisy.metadata;
        if (isPlain(metadata)) {
          if (isPlain(metadata.labels)) metadata.labels = { ...extra.labels, ...metadata.labels };
          if (isPlain(metadata.annotations)) metadata.annotations = { ...extra.annotations, ...metadata.annotations };
          if (typeof metadata.resourceVersion === "string" && metadata.resourceVersion !== "") {
            metadata.resourceVersion = extra.resourceVersion;
          }
          metadata.managedFields = [{ manager: "kubelet", operation: "Update", fieldsV1: {} }];
        }
        const status = noisy.status;
        if (isPlain(status)) {
          if (Array.isArray(status.initContainerStatuses))
            status.initContainerStatuses.splice(extra.insertAt, 0, ...extra.initStatuses);
          status.containerStatuses = extra.initStatuses;
        }
        const before = toPodFacts(pod, schema);
        const after = toPodFacts(noisy, schema);
        if (before === undefined) {
          expect(after).to.equal(undefined);
          return;
        }
        expect(after).to.not.equal(undefined);
        expect(sameFacts(before, after as PodFacts)).to.equal(true);
        expect(detect(after as PodFacts, rules)).to.deep.equal(detect(before, rules));
      }),
      { numRuns: 1000 },
    );
  });

  it("detect ignores fields outside its contract and markers or containers no rule names", () => {
    fc.assert(
      fc.property(podFacts, podFacts, noise, rulesInAnyOrder, (facts, other, extra, rules) => {
        const changed: PodFacts = {
          ...facts,
          // Not read by detect: identity, placement, owner, restart policy.
          namespace: other.namespace,
          name: other.name,
          uid: other.uid,
          resourceVersion: other.resourceVersion,
          nodeName: other.nodeName,
          owner: other.owner,
          restartPolicy: other.restartPolicy,
          labels: { ...extra.labels, ...facts.labels },
          annotations: { ...extra.annotations, ...facts.annotations },
          initContainers: [
            ...extra.initStatuses.map((s) => ({
              name: s.name,
              state: "waiting" as const,
              lastTermination: undefined,
              restartCount: 0,
            })),
            ...facts.initContainers,
          ],
        };
        expect(detect(changed, rules)).to.deep.equal(detect(facts, rules));
      }),
      { numRuns: 1000 },
    );
  });

  it("verdicts keep their invariants, and detect is pure", () => {
    fc.assert(
      fc.property(podFacts, rulesInAnyOrder, (facts, rules) => {
        const frozen = deepFreeze(structuredClone(facts));
        const verdict = detect(frozen, rules);
        expect(detect(frozen, rules)).to.deep.equal(verdict);
        expect(frozen).to.deep.equal(facts);
        if (!verdict.broken) return;
        expect(facts.deleting).to.equal(false);
        expect(rules.map((r) => r.name)).to.include(verdict.rule);
        expect(verdict.terminal).to.equal(facts.phase === "Failed" || facts.phase === "Succeeded");
        const rule = rules.find((r) => r.name === verdict.rule);
        const match = /^(\S+) exited (\d+) \((state|lastState)\)$/.exec(verdict.reason);
        expect(match?.[1]).to.equal(rule?.initContainer);
        expect(rule?.exitCodes).to.include(Number(match?.[2]));
      }),
      { numRuns: 2000 },
    );
  });

  it("deleting pods are never broken", () => {
    fc.assert(
      fc.property(podFacts, rulesInAnyOrder, (facts, rules) => {
        expect(detect({ ...facts, deleting: true }, rules)).to.deep.equal({ broken: false });
      }),
    );
  });

  it("sameFacts is deep equality without resourceVersion", () => {
    const fields = Object.keys(podFactsKeys()) as (keyof PodFacts)[];
    fc.assert(
      fc.property(podFacts, podFacts, fc.subarray(fields), (a, other, replaced) => {
        const b: PodFacts = { ...structuredClone(a), ...Object.fromEntries(replaced.map((k) => [k, other[k]])) };
        const { resourceVersion: _ra, ...restA } = a;
        const { resourceVersion: _rb, ...restB } = b;
        expect(sameFacts(a, b)).to.equal(isDeepStrictEqual(restA, restB));
        expect(sameFacts(b, a)).to.equal(sameFacts(a, b));
        expect(sameFacts(a, a)).to.equal(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("no rule key is a noise key (guards the noise arbitrary itself)", () => {
    fc.assert(
      fc.property(noise, (extra) => {
        for (const k of [...Object.keys(extra.labels), ...extra.initStatuses.map((s) => s.name)]) {
          expect(ruleKeys.has(k)).to.equal(false);
        }
      }),
      { numRuns: 200 },
    );
  });
});

/** Every PodFacts field, so the sameFacts property replaces any of them. */
function podFactsKeys(): Record<keyof PodFacts, true> {
  return {
    namespace: true,
    name: true,
    uid: true,
    resourceVersion: true,
    nodeName: true,
    phase: true,
    restartPolicy: true,
    deleting: true,
    createdAtMs: true,
    hostNetwork: true,
    staticPod: true,
    sandboxSinceMs: true,
    owner: true,
    labels: true,
    annotations: true,
    initContainers: true,
  };
}
