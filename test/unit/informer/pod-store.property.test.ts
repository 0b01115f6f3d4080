// Property test: PodStore matches a plain Map model under any upsert/delete/replaceAll sequence, and its changes are exact.

import { expect } from "chai";
import fc from "fast-check";
import type { ContainerState, PodFacts } from "../../../src/detect/facts.js";
import { podKey } from "../../../src/detect/facts.js";
import { type PodChange, PodStore } from "../../../src/informer/pod-store.js";
import { exited, init, podFacts } from "../../support/pod-builders.js";

// Small domains so keys collide and facts repeat often.
const namespaceArb = fc.constantFrom("ns1", "ns2");
const nameArb = fc.constantFrom("a", "b", "c");
const stateArb: fc.Arbitrary<ContainerState> = fc.oneof(
  fc.constantFrom<ContainerState>("running", "waiting", "unknown"),
  fc.constantFrom(0, 1, 126).map((code) => exited(code)),
);
const factsArb: fc.Arbitrary<PodFacts> = fc
  .record({
    namespace: namespaceArb,
    name: nameArb,
    uid: fc.constantFrom("u1", "u2"),
    resourceVersion: fc.nat(20).map(String),
    phase: fc.constantFrom(undefined, "Pending", "Running", "Failed"),
    deleting: fc.boolean(),
    labels: fc.dictionary(fc.constantFrom("x", "y"), fc.constantFrom("1", "2"), { maxKeys: 2 }),
    owner: fc.constantFrom(undefined, { kind: "ReplicaSet", name: "rs", uid: "rs-1" }),
    inits: fc.option(stateArb, { nil: undefined }),
  })
  .map(({ inits, ...rest }) =>
    podFacts({ ...rest, initContainers: inits === undefined ? [] : [init("istio-validation", inits)] }),
  );

type Op =
  | { kind: "upsert"; facts: PodFacts }
  | { kind: "delete"; namespace: string; name: string }
  | { kind: "replaceAll"; listed: PodFacts[] };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("upsert" as const), facts: factsArb }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("delete" as const), namespace: namespaceArb, name: nameArb }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("replaceAll" as const), listed: fc.array(factsArb, { maxLength: 6 }) }),
  },
);

const keyOf = (f: PodFacts): string => podKey(f.namespace, f.name);

/** The model's own notion of "nothing a verdict reads changed": everything but resourceVersion, records sorted. */
const relevant = (f: PodFacts): string => {
  const { resourceVersion: _ignored, labels, annotations, ...rest } = f;
  const sorted = (r: Readonly<Record<string, string>>) => Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify({ ...rest, labels: sorted(labels), annotations: sorted(annotations) });
};
const same = (a: PodFacts, b: PodFacts): boolean => relevant(a) === relevant(b);

function expectSameChange(actual: PodChange | undefined, expected: PodChange | undefined): void {
  if (expected === undefined) {
    expect(actual).to.equal(undefined);
    return;
  }
  expect(actual).to.not.equal(undefined);
  expect(actual?.key).to.equal(expected.key);
  // Identity: the store hands out the very facts it was given.
  expect(actual?.previous).to.equal(expected.previous);
  expect(actual?.current).to.equal(expected.current);
}

function expectStoreEqualsModel(store: PodStore, model: Map<string, PodFacts>): void {
  expect(store.size).to.equal(model.size);
  for (const [key, facts] of model) expect(store.get(key)).to.equal(facts);
  const values = [...store.values()];
  expect(values).to.have.length(model.size);
  expect(new Set(values)).to.deep.equal(new Set(model.values()));
  // The namespace index names exactly the pods of each namespace (and an emptied namespace none).
  for (const namespace of ["ns1", "ns2", "ns3"]) {
    const expected = [...model.values()].filter((facts) => facts.namespace === namespace);
    expect(new Set(store.inNamespace(namespace)), namespace).to.deep.equal(new Set(expected));
  }
}

function checkReplaceAll(store: PodStore, model: Map<string, PodFacts>, list: PodFacts[]): Map<string, PodFacts> {
  const listed = new Map(list.map((f) => [keyOf(f), f]));
  const changes = store.replaceAll(listed);

  const keys = changes.map((c) => c.key);
  expect(new Set(keys).size, "one change per key at most").to.equal(keys.length);
  for (const change of changes) {
    expect(change.previous).to.equal(model.get(change.key));
    expect(change.current).to.equal(listed.get(change.key));
    // Only real differences: vanished, new, or changed in a relevant fact.
    const { previous, current } = change;
    expect(previous === undefined || current === undefined || !same(previous, current)).to.equal(true);
  }

  // Applying the changes to the old model gives the new one (up to resourceVersion of unchanged pods).
  const applied = new Map(model);
  for (const { key, current } of changes) {
    if (current === undefined) applied.delete(key);
    else applied.set(key, current);
  }
  expect([...applied.keys()].sort()).to.deep.equal([...listed.keys()].sort());
  for (const [key, facts] of listed) {
    const got = applied.get(key);
    expect(got !== undefined && same(got, facts), `applied changes agree on ${key}`).to.equal(true);
  }
  return new Map(listed);
}

describe("informer/PodStore (property)", () => {
  it("matches a Map model, and replaceAll's changes turn the old model into the new one", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        const store = new PodStore();
        let model = new Map<string, PodFacts>();
        for (const op of ops) {
          switch (op.kind) {
            case "upsert": {
              const key = keyOf(op.facts);
              const previous = model.get(key);
              const expected =
                previous !== undefined && same(previous, op.facts) ? undefined : { key, previous, current: op.facts };
              expectSameChange(store.upsert(op.facts), expected);
              model.set(key, op.facts);
              break;
            }
            case "delete": {
              const key = podKey(op.namespace, op.name);
              const previous = model.get(key);
              const expected = previous === undefined ? undefined : { key, previous, current: undefined };
              expectSameChange(store.remove(podKey(op.namespace, op.name)), expected);
              model.delete(key);
              break;
            }
            case "replaceAll":
              model = checkReplaceAll(store, model, op.listed);
              break;
          }
          expectStoreEqualsModel(store, model);
        }
      }),
      { numRuns: 300 },
    );
  });
});
