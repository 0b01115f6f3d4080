// Tests of factsSchema and toPodFacts on realistic raw Pods, both watch JSON and client-node models.

import { loadYaml, type V1Pod } from "@kubernetes/client-node";
import { expect } from "chai";
import { detect } from "../../../src/detect/detect.js";
import type { PodFacts } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { AmbientRule, ValidatorRule as Rule } from "../../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { exited, init, podFacts } from "../../support/pod-builders.js";
import { istioPodJson } from "./raw-pod-fixture.js";

const istio = presetRule("istio") as Rule;
const linkerd = presetRule("linkerd") as Rule;
const withMessage: Rule = { ...istio, name: "istio-msg", messageContains: "not redirected" };

const schema = factsSchema([istio, linkerd], { labelKeys: ["app"] });

// The builder's defaults (uid, node, phase, creation time, ...) are the fixture's; the rest is spelt out.
const expectedFacts: PodFacts = podFacts({
  namespace: "bookinfo",
  name: "reviews-v1-7d9f8b6c5-x2x4q",
  resourceVersion: "4711023",
  owner: { kind: "ReplicaSet", name: "reviews-v1-7d9f8b6c5", uid: "5a0e0e3c-2b7b-4c53-8f0f-3f4d3a1f1d11" },
  labels: { app: "reviews" },
  // Only the annotation's presence matters to the istio rule: its long value is not kept.
  annotations: { "sidecar.istio.io/status": "" },
  initContainers: [
    init(
      "istio-validation",
      "waiting",
      exited(126, undefined, Date.parse("2025-03-04T10:16:45Z"), Date.parse("2025-03-04T10:16:40Z")),
      4,
    ),
  ],
});

/** The fixture with one metadata/spec/status field replaced (or removed, with `undefined`). */
function podWith(part: "metadata" | "spec" | "status", key: string, value: unknown): Record<string, unknown> {
  const pod = istioPodJson();
  const section: Record<string, unknown> = pod[part];
  if (value === undefined) delete section[key];
  else section[key] = value;
  return pod;
}

describe("factsSchema", () => {
  it("collects marker keys, validator names and extra label keys, without duplicates", () => {
    const twice = factsSchema([istio, linkerd, istio], { labelKeys: ["app", "linkerd.io/control-plane-ns"] });
    expect(twice).to.deep.equal({
      labelKeys: ["app", "linkerd.io/control-plane-ns"],
      annotationKeys: ["sidecar.istio.io/status"],
      // The extra label keys are read by value; the presets' markers only by presence.
      valueKeys: new Set(["app", "linkerd.io/control-plane-ns"]),
      initContainers: ["istio-validation", "linkerd-network-validator"],
      keepMessages: false,
      keepSandboxSince: false,
    });
  });

  it("keeps messages only when some rule matches on a non-empty substring", () => {
    expect(factsSchema([istio, withMessage]).keepMessages).to.equal(true);
    expect(factsSchema([{ ...istio, messageContains: "" }]).keepMessages).to.equal(false);
    expect(factsSchema([]).keepMessages).to.equal(false);
  });
});

describe("toPodFacts", () => {
  it("keeps only the schema's labels, annotations and init containers from a full pod", () => {
    expect(toPodFacts(istioPodJson(), schema)).to.deep.equal(expectedFacts);
  });

  it("marks a static pod's mirror by its annotation or by a controlling Node owner", () => {
    const annotated = podWith("metadata", "annotations", { "kubernetes.io/config.mirror": "5f2c" });
    expect(toPodFacts(annotated, schema)?.staticPod).to.equal(true);
    const nodeOwned = podWith("metadata", "ownerReferences", [
      { apiVersion: "v1", kind: "Node", name: "node-a", uid: "n-1", controller: true },
    ]);
    expect(toPodFacts(nodeOwned, schema)?.staticPod).to.equal(true);
    const daemonSet = podWith("metadata", "ownerReferences", [
      { apiVersion: "apps/v1", kind: "DaemonSet", name: "agent", uid: "d-1", controller: true },
    ]);
    expect(toPodFacts(daemonSet, schema)?.staticPod).to.equal(false);
    expect(toPodFacts(istioPodJson(), schema)?.staticPod).to.equal(false);
  });

  it("the facts say the fixture pod is broken under istio", () => {
    const facts = toPodFacts(istioPodJson(), schema) as PodFacts;
    expect(detect(facts, [linkerd, istio])).to.deep.equal({
      broken: true,
      rule: "istio",
      reason: "istio-validation exited 126 (lastState)",
      terminal: false,
    });
  });

  it("keeps termination messages when a rule needs them", () => {
    const facts = toPodFacts(istioPodJson(), factsSchema([withMessage]));
    expect(facts?.initContainers[0]?.lastTermination?.message).to.equal(
      "Error: iptables validation failed; workload traffic not redirected",
    );
    expect(detect(facts as PodFacts, [withMessage])).to.include({ broken: true, rule: "istio-msg" });
  });

  it("keeps nothing of labels, annotations or init containers when no rule asks", () => {
    const facts = toPodFacts(istioPodJson(), factsSchema([]));
    expect(facts).to.include({ name: "reviews-v1-7d9f8b6c5-x2x4q" });
    expect(facts?.labels).to.deep.equal({});
    expect(facts?.annotations).to.deep.equal({});
    expect(facts?.initContainers).to.deep.equal([]);
  });

  it("gives the same facts for a client-node V1Pod (Date timestamps, model classes)", () => {
    const raw = podWith("metadata", "deletionTimestamp", "2025-03-04T10:20:00Z");
    const typed = loadYaml<V1Pod>(JSON.stringify(raw));
    expect(typed.metadata?.deletionTimestamp).to.be.instanceOf(Date);
    expect(toPodFacts(typed, schema)).to.deep.equal({ ...expectedFacts, deleting: true });
    expect(toPodFacts(raw, schema)).to.deep.equal({ ...expectedFacts, deleting: true });
  });

  describe("deletionTimestamp", () => {
    const cases: [string, unknown, boolean][] = [
      ["absent", undefined, false],
      ["null", null, false],
      ["a string", "2025-03-04T10:20:00Z", true],
      ["a Date", new Date("2025-03-04T10:20:00Z"), true],
    ];
    for (const [name, value, deleting] of cases) {
      it(`${name}: deleting=${deleting}`, () => {
        expect(toPodFacts(podWith("metadata", "deletionTimestamp", value), schema)?.deleting).to.equal(deleting);
      });
    }
  });

  describe("identity fields", () => {
    for (const key of ["namespace", "name", "uid", "resourceVersion"]) {
      for (const [what, value] of [
        ["missing", undefined],
        ["empty", ""],
        ["null", null],
        ["a number", 42],
        ["an object", { s: "x" }],
      ] as const) {
        it(`${key} ${what}: undefined`, () => {
          expect(toPodFacts(podWith("metadata", key, value), schema)).to.equal(undefined);
        });
      }
    }

    it("not an object, or metadata not an object: undefined", () => {
      for (const input of [undefined, null, 1, "pod", [], [istioPodJson()], { metadata: "x" }, { metadata: [] }]) {
        expect(toPodFacts(input, schema)).to.equal(undefined);
      }
    });
  });

  describe("owner", () => {
    const rs = { kind: "ReplicaSet", name: "rs", uid: "u1" };
    const cases: [string, unknown, unknown][] = [
      ["no ownerReferences", undefined, undefined],
      ["not an array", { controller: true, ...rs }, undefined],
      ["only non-controller refs", [{ ...rs }, { ...rs, controller: false }], undefined],
      ["controller flag must be exactly true", [{ ...rs, controller: "true" }], undefined],
      ["picks the controller among others", [null, 5, { ...rs, name: "a" }, { ...rs, controller: true }], rs],
      [
        "a controller missing its uid counts as none",
        [{ kind: "ReplicaSet", name: "rs", controller: true }],
        undefined,
      ],
    ];
    for (const [name, refs, expected] of cases) {
      it(name, () => {
        expect(toPodFacts(podWith("metadata", "ownerReferences", refs), schema)?.owner).to.deep.equal(expected);
      });
    }
  });

  describe("init container statuses", () => {
    const statusOf = (status: unknown) => {
      const facts = toPodFacts(podWith("status", "initContainerStatuses", [status]), factsSchema([withMessage]));
      return facts?.initContainers;
    };
    const t126 = { exitCode: 126, reason: "Error", message: "not redirected" };
    // As kept: startedAt and finishedAt are absent from t126, so they read as undefined.
    const t126f = { ...t126, startedAtMs: undefined, finishedAtMs: undefined };
    const cases: [string, unknown, unknown][] = [
      [
        "terminated now (restartPolicy Never)",
        { name: "istio-validation", state: { terminated: t126 } },
        [{ name: "istio-validation", state: t126f, lastTermination: undefined, restartCount: 0 }],
      ],
      [
        "running with a lastState",
        { name: "istio-validation", state: { running: { startedAt: "x" } }, lastState: { terminated: t126 } },
        [{ name: "istio-validation", state: "running", lastTermination: t126f, restartCount: 0 }],
      ],
      [
        "startedAt, finishedAt and restartCount are kept; a bad restartCount reads as 0",
        {
          name: "istio-validation",
          state: { terminated: { ...t126, startedAt: "2025-03-04T10:16:57Z", finishedAt: "2025-03-04T10:17:01Z" } },
          lastState: { terminated: { ...t126, finishedAt: "not a time" } },
          restartCount: 2,
        },
        [
          {
            name: "istio-validation",
            state: {
              ...t126,
              startedAtMs: Date.parse("2025-03-04T10:16:57Z"),
              finishedAtMs: Date.parse("2025-03-04T10:17:01Z"),
            },
            lastTermination: t126f,
            restartCount: 2,
          },
        ],
      ],
      [
        "a negative or fractional restartCount reads as 0",
        { name: "istio-validation", state: { waiting: {} }, restartCount: -1.5 },
        [{ name: "istio-validation", state: "waiting", lastTermination: undefined, restartCount: 0 }],
      ],
      [
        "terminated wins over other keys",
        { name: "istio-validation", state: { waiting: {}, terminated: { exitCode: 0, reason: "Completed" } } },
        [
          {
            name: "istio-validation",
            state: {
              exitCode: 0,
              reason: "Completed",
              message: undefined,
              startedAtMs: undefined,
              finishedAtMs: undefined,
            },
            lastTermination: undefined,
            restartCount: 0,
          },
        ],
      ],
      [
        "non-integer exit codes do not count",
        {
          name: "istio-validation",
          state: { terminated: { exitCode: 126.5 } },
          lastState: { terminated: { exitCode: "126" } },
        },
        [{ name: "istio-validation", state: "unknown", lastTermination: undefined, restartCount: 0 }],
      ],
      [
        "wrong-typed state, reason and message",
        {
          name: "istio-validation",
          state: "running",
          lastState: { terminated: { exitCode: 126, reason: 1, message: {} } },
        },
        [
          {
            name: "istio-validation",
            state: "unknown",
            lastTermination: {
              exitCode: 126,
              reason: undefined,
              message: undefined,
              startedAtMs: undefined,
              finishedAtMs: undefined,
            },
            restartCount: 0,
          },
        ],
      ],
      ["other names are dropped", { name: "migrate-db", state: { terminated: t126 } }, []],
      ["a status without a name is dropped", { state: { terminated: t126 } }, []],
    ];
    for (const [name, status, expected] of cases) {
      it(name, () => {
        expect(statusOf(status)).to.deep.equal(expected);
      });
    }

    it("on duplicate names the first status wins", () => {
      const first = { name: "istio-validation", state: { waiting: {} } };
      const second = { name: "istio-validation", state: { running: {} } };
      const facts = toPodFacts(podWith("status", "initContainerStatuses", [first, second]), schema);
      expect(facts?.initContainers.map((c) => c.state)).to.deep.equal(["waiting"]);
    });

    it("copes with a huge array", () => {
      const noise = Array.from({ length: 200_000 }, (_, i) => ({ name: `c${i}`, state: { waiting: {} } }));
      noise.push({ name: "istio-validation", state: { waiting: {} } });
      const facts = toPodFacts(podWith("status", "initContainerStatuses", noise), schema);
      expect(facts?.initContainers).to.have.length(1);
    });
  });

  describe("wrong-typed optional fields read as absent", () => {
    const cases: ["metadata" | "spec" | "status", string, unknown, (f: PodFacts) => unknown, unknown][] = [
      ["metadata", "labels", ["app"], (f) => f.labels, {}],
      ["metadata", "labels", { app: 7 }, (f) => f.labels, {}],
      ["metadata", "annotations", "sidecar.istio.io/status", (f) => f.annotations, {}],
      ["metadata", "annotations", null, (f) => f.annotations, {}],
      ["spec", "nodeName", 12, (f) => f.nodeName, undefined],
      ["spec", "nodeName", "", (f) => f.nodeName, undefined],
      ["spec", "restartPolicy", ["Never"], (f) => f.restartPolicy, undefined],
      ["status", "phase", { Running: true }, (f) => f.phase, undefined],
      ["status", "initContainerStatuses", { 0: { name: "istio-validation" } }, (f) => f.initContainers, []],
    ];
    for (const [part, key, value, read, expected] of cases) {
      it(`${part}.${key} = ${JSON.stringify(value)}`, () => {
        const facts = toPodFacts(podWith(part, key, value), schema);
        expect(facts).to.not.equal(undefined);
        expect(read(facts as PodFacts)).to.deep.equal(expected);
      });
    }

    it("spec and status of the wrong type", () => {
      const pod = { ...istioPodJson(), spec: "x", status: [1, 2] };
      expect(toPodFacts(pod, schema)).to.include({ nodeName: undefined, phase: undefined, restartPolicy: undefined });
    });

    it("inherited properties are not fields", () => {
      const labels = Object.create({ app: "inherited" }) as Record<string, unknown>;
      expect(toPodFacts(podWith("metadata", "labels", labels), schema)?.labels).to.deep.equal({});
    });
  });

  describe("sandbox time (the ambient enrolment grace counts from there)", () => {
    const ambientSchema = factsSchema([presetRule("istio-ambient") as AmbientRule]);
    const sandboxOf = (status: Record<string, unknown>) =>
      toPodFacts({ ...istioPodJson(), status }, ambientSchema)?.sandboxSinceMs;
    const condition = (status: string, lastTransitionTime?: string) => ({
      type: "PodReadyToStartContainers",
      status,
      ...(lastTransitionTime && { lastTransitionTime }),
    });
    const crashLooping = {
      name: "app",
      state: { waiting: { reason: "CrashLoopBackOff" } },
      lastState: { terminated: { exitCode: 1, startedAt: "2025-03-04T10:17:00Z", finishedAt: "2025-03-04T10:17:01Z" } },
    };

    it("is the PodReadyToStartContainers condition's True transition, whatever the containers do", () => {
      const status = { conditions: [condition("True", "2025-03-04T10:15:03Z")], containerStatuses: [crashLooping] };
      expect(sandboxOf(status)).to.equal(Date.parse("2025-03-04T10:15:03Z"));
    });

    it("is undefined while that condition is not True (no sandbox, or it is being re-created)", () => {
      expect(sandboxOf({ conditions: [condition("False", "2025-03-04T10:15:03Z")] })).to.equal(undefined);
    });

    it("without the condition, is the earliest start any container shows, a crash-looping one's last run included", () => {
      const running = { name: "sidecar", state: { running: { startedAt: "2025-03-04T10:18:00Z" } } };
      expect(sandboxOf({ containerStatuses: [running, crashLooping] })).to.equal(Date.parse("2025-03-04T10:17:00Z"));
      expect(sandboxOf({ conditions: [condition("True")], containerStatuses: [running] })).to.equal(
        Date.parse("2025-03-04T10:18:00Z"),
      );
      expect(sandboxOf({ containerStatuses: [{ name: "app", state: { waiting: {} } }] })).to.equal(undefined);
    });

    it("is not read when no rule needs it", () => {
      const status = { conditions: [condition("True", "2025-03-04T10:15:03Z")] };
      expect(toPodFacts({ ...istioPodJson(), status }, schema)?.sandboxSinceMs).to.equal(undefined);
    });
  });

  it("never throws, even on a hostile Proxy", () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error("boom");
        },
        has: () => {
          throw new Error("boom");
        },
        getOwnPropertyDescriptor: () => {
          throw new Error("boom");
        },
      },
    );
    expect(toPodFacts(hostile, schema)).to.equal(undefined);
    expect(toPodFacts({ ...istioPodJson(), metadata: hostile }, schema)).to.equal(undefined);
  });
});
