// The one decision beside Istio's repair: hold while Istio can still fix a pod in place, delete as its fallback only
// on evidence (a failure of a run that started after Istio had its chance, or a pod that never re-runs its validator),
// leave pods to an Istio that deletes or labels them itself. Fail-safe on missing or future times.
import { expect } from "chai";
import type { ContainerState, PodFacts, Termination } from "../../../src/detect/facts.js";
import type { IstioRepairSettings, IstioRepairState } from "../../../src/detect/istio-repair-settings.js";
import { meshRepairCheck } from "../../../src/safety/mesh-repair-guard.js";
import { exited, init, podFacts } from "../../support/pod-builders.js";

const NOW = Date.parse("2026-12-04T12:00:00Z");
const MIN_READY = 10_000;
const READY_SINCE = NOW - 3_600_000;
/** Istio's repair grace beyond min-ready, 10 s (a literal: a grace changed by mistake must fail here). */
const ISTIO_REPAIR_GRACE_MS = 10_000;
/** The first moment a failed run may have started for its failure to say Istio's repair did not work. */
const LATE = READY_SINCE + MIN_READY + ISTIO_REPAIR_GRACE_MS + 1;

const settings = (values: Partial<IstioRepairSettings>): IstioRepairState => ({
  kind: "detected",
  settings: {
    source: "ConfigMap istio-system/istio-cni-config",
    enabled: true,
    repairPods: true,
    deletePods: false,
    labelPods: false,
    ...values,
  },
});
const IN_PLACE = settings({});

/** A failed run; it started `ranMs` before it finished. */
const failed = (finishedAtMs: number | undefined, ranMs = 0): Termination =>
  exited(126, undefined, finishedAtMs, finishedAtMs === undefined ? undefined : finishedAtMs - ranMs);
const pod = (state: ContainerState, last: Termination | undefined, restarts: number, extra: Partial<PodFacts> = {}) =>
  podFacts({ initContainers: [init("istio-validation", state, last, restarts)], ...extra });

type Case = {
  name: string;
  istio?: IstioRepairState;
  facts: PodFacts;
  readySince?: number | undefined;
  want: "fallback" | "mesh_repair_pending" | "hold_active" | undefined;
  waitMs?: number;
};

const cases: Case[] = [
  // Istio's settings.
  {
    name: "Istio's repair absent: no objection",
    istio: { kind: "absent" },
    facts: pod("waiting", failed(LATE), 3),
    want: undefined,
  },
  {
    name: "REPAIR_ENABLED=false: no objection",
    istio: settings({ enabled: false }),
    facts: pod("waiting", failed(NOW - 5_000), 0),
    want: undefined,
  },
  {
    name: "enabled but every action off: no objection",
    istio: settings({ repairPods: false }),
    facts: pod("waiting", failed(NOW - 5_000), 0),
    want: undefined,
  },
  {
    name: "Istio deletes itself: active",
    istio: settings({ repairPods: false, deletePods: true }),
    facts: pod("waiting", failed(LATE), 3),
    want: "hold_active",
  },
  {
    name: "Istio labels itself: active, even for a Never pod",
    istio: settings({ repairPods: false, labelPods: true }),
    facts: pod(failed(LATE), undefined, 0, { restartPolicy: "Never" }),
    want: "hold_active",
  },
  // In place: the evidence.
  { name: "run 2 started late enough and failed: fallback", facts: pod("waiting", failed(LATE), 2), want: "fallback" },
  {
    name: "run 2 started late enough, terminated now: fallback",
    facts: pod(failed(LATE), failed(LATE - 10_000), 2),
    want: "fallback",
  },
  {
    name: "run 1 failed long after the agent turned Ready: pending (it began before Istio saw any lastState)",
    facts: pod("waiting", failed(NOW - 5_000, 4_000), 1),
    want: "mesh_repair_pending",
  },
  {
    name: "run 1 terminated now, long after the agent turned Ready: pending",
    facts: pod(failed(NOW - 1_000, 4_000), failed(NOW - 8_000, 4_000), 1),
    want: "mesh_repair_pending",
  },
  {
    name: "run 3 started before the agent was Ready long enough, finished after: pending",
    facts: pod("waiting", failed(LATE + 5_000, 5_003), 3),
    want: "mesh_repair_pending",
  },
  {
    name: "failed before the agent was Ready long enough: pending",
    facts: pod("waiting", failed(LATE - 2), 4),
    want: "mesh_repair_pending",
  },
  {
    name: "failed before the agent turned Ready at all: pending",
    facts: pod("waiting", failed(READY_SINCE - 60_000), 4),
    want: "mesh_repair_pending",
  },
  {
    name: "first failure, late: Istio has not had its run yet",
    facts: pod("waiting", failed(LATE), 0),
    want: "mesh_repair_pending",
  },
  {
    name: "first run terminated just now: pending",
    facts: pod(failed(LATE), undefined, 0),
    want: "mesh_repair_pending",
  },
  {
    name: "the validator is running again: wait for its result",
    facts: pod("running", failed(LATE), 5),
    want: "mesh_repair_pending",
  },
  {
    name: "restartPolicy Never: fallback at once",
    facts: pod(failed(NOW - 1_000), undefined, 0, { restartPolicy: "Never" }),
    readySince: NOW - 2_000,
    want: "fallback",
  },
  {
    name: "unknown settings are treated as in place: fallback on evidence",
    istio: { kind: "unknown", why: "forbidden" },
    facts: pod("waiting", failed(LATE), 2),
    want: "fallback",
  },
  {
    name: "unknown settings are treated as in place: pending without it",
    istio: { kind: "unknown", why: "forbidden" },
    facts: pod("waiting", failed(LATE - 2), 2),
    want: "mesh_repair_pending",
  },
  // Fail-safe.
  { name: "no start time: pending", facts: pod("waiting", failed(undefined), 3), want: "mesh_repair_pending" },
  {
    name: "a start time in the future: pending until then",
    facts: pod("waiting", failed(NOW + 30_000), 3),
    want: "mesh_repair_pending",
    waitMs: 30_000,
  },
  {
    name: "no Ready agent time: pending",
    facts: pod("waiting", failed(LATE), 3),
    readySince: undefined,
    want: "mesh_repair_pending",
  },
  {
    name: "an agent Ready time in the future: pending",
    facts: pod("waiting", failed(NOW - 1_000), 3),
    readySince: NOW + 60_000,
    want: "mesh_repair_pending",
  },
  { name: "no validator status at all: pending", facts: podFacts({ initContainers: [] }), want: "mesh_repair_pending" },
];

describe("meshRepairCheck", () => {
  for (const c of cases) {
    it(c.name, () => {
      const got = meshRepairCheck({
        istio: c.istio ?? IN_PLACE,
        facts: c.facts,
        validator: "istio-validation",
        agentReadySinceMs: "readySince" in c ? c.readySince : READY_SINCE,
        minReadyMs: MIN_READY,
        nowMs: NOW,
      });
      const kind = got === undefined ? undefined : got.kind === "hold" ? got.reason : got.kind;
      expect(kind === "mesh_repair_active" ? "hold_active" : kind).to.equal(c.want);
      if (c.waitMs !== undefined) expect(got?.kind === "hold" ? got.waitMs : undefined).to.equal(c.waitMs);
    });
  }

  it("says which run failed, when it started and since when the agent was Ready", () => {
    const got = meshRepairCheck({
      istio: IN_PLACE,
      facts: pod("waiting", failed(LATE), 2),
      validator: "istio-validation",
      agentReadySinceMs: READY_SINCE,
      minReadyMs: MIN_READY,
      nowMs: NOW,
    });
    expect(got).to.deep.equal({
      kind: "fallback",
      basis: "failed_again",
      detail: `Istio's in-place repair did not fix it: the validator's run 2, started at ${new Date(LATE).toISOString()} after Istio had seen an earlier failure (the CNI agent Ready since ${new Date(READY_SINCE).toISOString()}), failed too`,
    });
  });
});
