// Unit and property tests for BrokenPods: entries per key, the broken-pods gauge and the detections counter.

import { expect } from "chai";
import fc from "fast-check";
import { Registry } from "prom-client";
import { type BrokenEntry, BrokenPods } from "../../../src/controller/broken-pods.js";
import { createMetrics, type Metrics } from "../../../src/observe/metrics.js";

const RULES = ["istio", "linkerd"];

function setup(): { registry: Registry; metrics: Metrics; broken: BrokenPods } {
  const registry = new Registry();
  const metrics = createMetrics(registry, { ruleNames: RULES, version: "test" });
  return { registry, metrics, broken: new BrokenPods(metrics.brokenPods, metrics.detections) };
}

type Series = { readonly get: () => Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> };

/** The value of the series with rule=`rule`, or undefined when the series does not exist. */
async function seriesValue(metric: Series, rule: string): Promise<number | undefined> {
  const { values } = await metric.get();
  return values.find((v) => v.labels.rule === rule)?.value;
}

async function state(metrics: Metrics, rules: readonly string[] = RULES) {
  const gauge: Record<string, number | undefined> = {};
  const detections: Record<string, number | undefined> = {};
  for (const rule of rules) {
    gauge[rule] = await seriesValue(metrics.brokenPods, rule);
    detections[rule] = await seriesValue(metrics.detections, rule);
  }
  return { gauge, detections };
}

describe("controller/BrokenPods", () => {
  it("starts empty, with the known rules' series at zero", async () => {
    const { metrics, broken } = setup();
    expect([...broken.keys()].length).to.equal(0);
    expect(broken.has("shop/a")).to.equal(false);
    expect([...broken.keys()]).to.deep.equal([]);
    expect(await state(metrics)).to.deep.equal({
      gauge: { istio: 0, linkerd: 0 },
      detections: { istio: 0, linkerd: 0 },
    });
  });

  it("records a newly broken pod: entry, gauge +1, one detection", async () => {
    const { registry, metrics, broken } = setup();
    const entry = broken.markBroken("shop/a", "uid-1", "istio", 1000);
    expect(entry).to.deep.equal({ uid: "uid-1", rule: "istio", sinceMs: 1000 });
    expect([...broken.keys()].length).to.equal(1);
    expect(broken.has("shop/a")).to.equal(true);
    expect([...broken.keys()]).to.deep.equal(["shop/a"]);
    expect(await state(metrics)).to.deep.equal({
      gauge: { istio: 1, linkerd: 0 },
      detections: { istio: 1, linkerd: 0 },
    });
    // The same numbers as Prometheus scrapes them.
    expect(await registry.getSingleMetricAsString("cni_repair_broken_pods")).to.include(
      'cni_repair_broken_pods{rule="istio"} 1\n',
    );
    expect(await registry.getSingleMetricAsString("cni_repair_detections_total")).to.include(
      'cni_repair_detections_total{rule="istio"} 1\n',
    );
  });

  it("does not count the same UID under the same rule twice, and keeps the first time seen", async () => {
    const { metrics, broken } = setup();
    const first = broken.markBroken("shop/a", "uid-1", "istio", 1000);
    const again = broken.markBroken("shop/a", "uid-1", "istio", 5000);
    expect(again).to.equal(first);
    expect(again.sinceMs).to.equal(1000);
    expect([...broken.keys()].length).to.equal(1);
    expect(await state(metrics)).to.deep.equal({
      gauge: { istio: 1, linkerd: 0 },
      detections: { istio: 1, linkerd: 0 },
    });
  });

  it("counts a replacement pod (new UID under the same key) as a new detection, since now", async () => {
    const { metrics, broken } = setup();
    broken.markBroken("shop/a", "uid-1", "istio", 1000);
    const replacement = broken.markBroken("shop/a", "uid-2", "istio", 7000);
    expect(replacement).to.deep.equal({ uid: "uid-2", rule: "istio", sinceMs: 7000 });
    expect([...broken.keys()].length).to.equal(1);
    expect(await state(metrics)).to.deep.equal({
      gauge: { istio: 1, linkerd: 0 },
      detections: { istio: 2, linkerd: 0 },
    });
  });

  it("moves the gauge when the same UID becomes broken under another rule, without a new detection", async () => {
    const { metrics, broken } = setup();
    broken.markBroken("shop/a", "uid-1", "istio", 1000);
    const moved = broken.markBroken("shop/a", "uid-1", "linkerd", 3000);
    expect(moved).to.deep.equal({ uid: "uid-1", rule: "linkerd", sinceMs: 1000 });
    expect(await state(metrics)).to.deep.equal({
      gauge: { istio: 0, linkerd: 1 },
      detections: { istio: 1, linkerd: 0 },
    });
  });

  it("moves the gauge and counts a detection for a replacement broken under another rule", async () => {
    const { metrics, broken } = setup();
    broken.markBroken("shop/a", "uid-1", "istio", 1000);
    expect(broken.markBroken("shop/a", "uid-2", "linkerd", 2000).sinceMs).to.equal(2000);
    expect(await state(metrics)).to.deep.equal({
      gauge: { istio: 0, linkerd: 1 },
      detections: { istio: 1, linkerd: 1 },
    });
  });

  it("counts the gauge per rule across many pods", async () => {
    const { metrics, broken } = setup();
    broken.markBroken("shop/a", "uid-a", "istio", 1);
    broken.markBroken("shop/b", "uid-b", "istio", 2);
    broken.markBroken("web/a", "uid-c", "linkerd", 3);
    expect([...broken.keys()].length).to.equal(3);
    expect([...broken.keys()].sort()).to.deep.equal(["shop/a", "shop/b", "web/a"]);
    expect(await state(metrics)).to.deep.equal({
      gauge: { istio: 2, linkerd: 1 },
      detections: { istio: 2, linkerd: 1 },
    });
  });

  it("creates the series for a rule not known at start-up", async () => {
    const { metrics, broken } = setup();
    broken.markBroken("shop/a", "uid-1", "custom", 1);
    expect(await state(metrics, ["custom"])).to.deep.equal({ gauge: { custom: 1 }, detections: { custom: 1 } });
  });

  describe("clear", () => {
    it("returns the entry, forgets the pod and decrements the gauge; detections stay", async () => {
      const { metrics, broken } = setup();
      broken.markBroken("shop/a", "uid-1", "istio", 1000);
      broken.markBroken("shop/b", "uid-2", "istio", 2000);
      expect(broken.clear("shop/a")).to.deep.equal({ uid: "uid-1", rule: "istio", sinceMs: 1000 });
      expect(broken.has("shop/a")).to.equal(false);
      expect([...broken.keys()].length).to.equal(1);
      expect(await state(metrics)).to.deep.equal({
        gauge: { istio: 1, linkerd: 0 },
        detections: { istio: 2, linkerd: 0 },
      });
    });

    it("returns undefined for an unknown key and leaves the gauge alone (never below zero)", async () => {
      const { metrics, broken } = setup();
      expect(broken.clear("shop/nope")).to.equal(undefined);
      broken.markBroken("shop/a", "uid-1", "linkerd", 1);
      expect(broken.clear("shop/a")).to.not.equal(undefined);
      expect(broken.clear("shop/a")).to.equal(undefined);
      expect(await state(metrics)).to.deep.equal({
        gauge: { istio: 0, linkerd: 0 },
        detections: { istio: 0, linkerd: 1 },
      });
    });

    it("lets the same UID breaking again after a clear count as a new detection", async () => {
      const { metrics, broken } = setup();
      broken.markBroken("shop/a", "uid-1", "istio", 1000);
      broken.clear("shop/a");
      expect(broken.markBroken("shop/a", "uid-1", "istio", 9000).sinceMs).to.equal(9000);
      expect(await state(metrics)).to.deep.equal({
        gauge: { istio: 1, linkerd: 0 },
        detections: { istio: 2, linkerd: 0 },
      });
    });
  });

  describe("property", () => {
    type Op = { kind: "mark"; key: string; uid: string; rule: string; now: number } | { kind: "clear"; key: string };
    const keyArb = fc.constantFrom("ns/a", "ns/b", "ns/c");
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant("mark" as const),
          key: keyArb,
          uid: fc.constantFrom("u1", "u2"),
          rule: fc.constantFrom(...RULES),
          now: fc.nat(1_000_000),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("clear" as const), key: keyArb }) },
    );

    it("keeps the gauge equal to the entries per rule and counts exactly the new detections", async () => {
      // One registry for all runs: createMetrics registers names, so reset the two series between runs.
      const { metrics } = setup();
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { maxLength: 30 }), async (ops) => {
          metrics.brokenPods.reset();
          metrics.detections.reset();
          const broken = new BrokenPods(metrics.brokenPods, metrics.detections);
          const model = new Map<string, BrokenEntry>();
          const detections: Record<string, number> = { istio: 0, linkerd: 0 };
          for (const op of ops) {
            if (op.kind === "clear") {
              expect(broken.clear(op.key)).to.deep.equal(model.get(op.key));
              model.delete(op.key);
              continue;
            }
            const existing = model.get(op.key);
            const sameUid = existing?.uid === op.uid;
            if (!sameUid) detections[op.rule] = (detections[op.rule] ?? 0) + 1;
            const expected = { uid: op.uid, rule: op.rule, sinceMs: sameUid ? existing.sinceMs : op.now };
            expect(broken.markBroken(op.key, op.uid, op.rule, op.now)).to.deep.equal(expected);
            model.set(op.key, expected);
          }
          expect([...broken.keys()].length).to.equal(model.size);
          expect([...broken.keys()].sort()).to.deep.equal([...model.keys()].sort());
          const { gauge, detections: counted } = await state(metrics);
          for (const rule of RULES) {
            const entries = [...model.values()].filter((e) => e.rule === rule).length;
            expect(gauge[rule] ?? 0, `gauge ${rule}`).to.equal(entries);
            expect(counted[rule] ?? 0, `detections ${rule}`).to.equal(detections[rule]);
          }
        }),
        { numRuns: 200 },
      );
    });
  });
});
