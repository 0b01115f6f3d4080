// decide: mode × verdict × handled × bare × static × labelled × each guard objection (the pace included), in the
// documented order.

import { expect } from "chai";
import fc from "fast-check";
import type { Mode } from "../../../src/config/config.js";
import type { Verdict } from "../../../src/detect/detect.js";
import type { PodFacts } from "../../../src/detect/facts.js";
import { type Decision, decide, type GuardView, type PolicyInput } from "../../../src/safety/policy.js";
import { branchShares } from "../../support/branch-shares.js";
import { exited, init, istioPod } from "../../support/pod-builders.js";

const label = { key: "cni-repair.io/broken", value: "true" } as const;

const verdicts = {
  healthy: { broken: false },
  broken: { broken: true, rule: "istio", reason: "istio-validation exited 126 (lastState)", terminal: false },
  terminal: { broken: true, rule: "istio", reason: "istio-validation exited 126 (state)", terminal: true },
} as const satisfies Record<string, Verdict>;
type VerdictName = keyof typeof verdicts;

const brokenInit = [init("istio-validation", "waiting", exited(126))];

// What each guard may say; every detail is distinct so the test sees whose words the hold carries.
const LOOP_DETAIL = "replacement came back broken 5 s after our delete #1";
const STORM_DETAIL = "4 of 5 meshed pods broken on node node-a (more than 50%)";
const AGENT_DOWN_DETAIL = "no Ready CNI agent pod on node node-a";
const AGENT_WARMING_DETAIL = "the CNI agent on node node-a has been Ready for 4 s of the 10 s required";
const NODE_INFLIGHT_DETAIL = "too many pods deleted by us are still terminating on node node-a";
const NS_INFLIGHT_DETAIL = "too many pods deleted by us are still terminating in namespace shop";
const PACE_DETAIL = "deletions are paced by --max-deletions-per-minute; this pod's turn is in 3 s";
const STATIC_DETAIL = "a static pod's mirror on node node-a: deleting it repairs nothing (restart it on the node)";
const LOOP_WAIT_MS = 30_000;
const PACE_WAIT_MS = 3_000;
const AGENT_WAIT_MS = 6_000;

const loopCases = {
  none: undefined,
  waiting: { waitMs: LOOP_WAIT_MS, detail: LOOP_DETAIL },
  /** The backoff has run out: the guard still reports the loop, but no longer objects. */
  elapsed: { waitMs: 0, detail: LOOP_DETAIL },
} as const;
const agentCases = {
  none: undefined,
  down: { reason: "cni_agent_not_ready", detail: AGENT_DOWN_DETAIL },
  warming: { reason: "cni_agent_not_ready", waitMs: AGENT_WAIT_MS, detail: AGENT_WARMING_DETAIL },
} as const;
const inflightCases = {
  none: undefined,
  node: { reason: "node_inflight", detail: NODE_INFLIGHT_DETAIL },
  namespace: { reason: "namespace_inflight", detail: NS_INFLIGHT_DETAIL },
} as const;
type LoopCase = keyof typeof loopCases;
type AgentCase = keyof typeof agentCases;
type InflightCase = keyof typeof inflightCases;

type Case = {
  readonly mode: Mode;
  readonly verdict: VerdictName;
  readonly handled: boolean;
  readonly bare: boolean;
  readonly staticPod: boolean;
  readonly deleteBarePods: boolean;
  readonly labelled: boolean;
  readonly loop: LoopCase;
  readonly storm: boolean;
  readonly agent: AgentCase;
  readonly inflight: InflightCase;
  readonly paced: boolean;
};

const MODES: readonly Mode[] = ["delete", "label", "report"];
const VERDICTS: readonly VerdictName[] = ["healthy", "broken", "terminal"];
const BOOLS = [false, true] as const;
const LOOPS = Object.keys(loopCases) as LoopCase[];
const AGENTS = Object.keys(agentCases) as AgentCase[];
const INFLIGHTS = Object.keys(inflightCases) as InflightCase[];

function allCases(): Case[] {
  const cases: Case[] = [];
  for (const mode of MODES)
    for (const verdict of VERDICTS)
      for (const handled of BOOLS)
        for (const bare of BOOLS)
          for (const staticPod of BOOLS)
            for (const deleteBarePods of BOOLS)
              for (const labelled of BOOLS)
                for (const loop of LOOPS)
                  for (const storm of BOOLS)
                    for (const agent of AGENTS)
                      for (const inflight of INFLIGHTS)
                        for (const paced of BOOLS)
                          cases.push({
                            mode,
                            verdict,
                            handled,
                            bare,
                            staticPod,
                            deleteBarePods,
                            labelled,
                            loop,
                            storm,
                            agent,
                            inflight,
                            paced,
                          });
  return cases;
}

function guardsOf(c: Pick<Case, "loop" | "storm" | "agent" | "inflight"> & { paced?: boolean }): GuardView {
  const loop = loopCases[c.loop];
  const agent = agentCases[c.agent];
  const inflight = inflightCases[c.inflight];
  return {
    ...(loop && { loop }),
    ...(c.storm && { storm: { detail: STORM_DETAIL } }),
    ...(agent && { agent }),
    ...(inflight && { inflight }),
    ...(c.paced && { pace: { waitMs: PACE_WAIT_MS, detail: PACE_DETAIL } }),
  };
}

function factsOf(c: Pick<Case, "verdict" | "bare" | "labelled"> & { staticPod?: boolean }): PodFacts {
  return istioPod(brokenInit, {
    // The terminal verdict comes from a finished pod; its phase shows in the hold's detail.
    phase: c.verdict === "terminal" ? "Failed" : "Pending",
    labels: c.labelled ? { [label.key]: label.value } : {},
    ...(c.bare && { owner: undefined }),
    staticPod: c.staticPod === true,
  });
}

const inputOf = (c: Case): PolicyInput => ({
  facts: factsOf(c),
  verdict: verdicts[c.verdict],
  mode: c.mode,
  label,
  alreadyHandled: c.handled,
  deleteBarePods: c.deleteBarePods,
  guards: guardsOf(c),
});

const HEALTHY: Decision = { kind: "healthy" };
const act = (action: Mode): Decision => ({ kind: "act", action });
const hold = (reason: Extract<Decision, { kind: "hold" }>["reason"], detail: string, extra = {}): Decision => ({
  kind: "hold",
  reason,
  detail,
  ...extra,
});
const BARE_DETAIL = "no controlling owner would recreate it (--delete-bare-pods to delete anyway)";

/** A row matches a case when every listed dimension has one of the listed values; unlisted ones are "any". */
type When = { readonly [K in keyof Case]?: readonly Case[K][] };
type Row = { readonly name: string; readonly when: When; readonly expected: Decision };

// The documented policy, first matching row wins.
const table: readonly Row[] = [
  { name: "a healthy pod is healthy, whatever else holds", when: { verdict: ["healthy"] }, expected: HEALTHY },

  // Label mode labels every broken pod, terminal ones included, and listens to no guard.
  {
    name: "label mode skips a pod already labelled",
    when: { mode: ["label"], labelled: [true] },
    expected: { kind: "skip", reason: `already labelled ${label.key}=${label.value}` },
  },
  { name: "label mode labels every other broken pod", when: { mode: ["label"] }, expected: act("label") },

  // Delete and report mode.
  {
    name: "a terminal pod is held, before anything else",
    when: { verdict: ["terminal"] },
    expected: hold("terminal", "the pod has finished (phase Failed)"),
  },
  {
    name: "delete mode skips a UID it already deleted",
    when: { mode: ["delete"], handled: [true] },
    expected: { kind: "skip", reason: "already deleted by us" },
  },
  {
    name: "report mode skips a UID it already reported",
    when: { mode: ["report"], handled: [true] },
    expected: { kind: "skip", reason: "already reported" },
  },
  {
    name: "a static pod's mirror is held: deleting it repairs nothing",
    when: { staticPod: [true] },
    expected: hold("static_pod", STATIC_DETAIL),
  },
  {
    name: "delete mode holds an unlabelled bare pod and asks for the label",
    when: { mode: ["delete"], bare: [true], deleteBarePods: [false], labelled: [false] },
    expected: hold("bare_pod", BARE_DETAIL, { label: true }),
  },
  {
    name: "a bare pod is held without a label request when labelled already or in report mode",
    when: { bare: [true], deleteBarePods: [false] },
    expected: hold("bare_pod", BARE_DETAIL, { label: false }),
  },
  {
    name: "a loop backoff still running holds, with the time left",
    when: { loop: ["waiting"] },
    expected: hold("loop_backoff", LOOP_DETAIL, { retryAfterMs: LOOP_WAIT_MS }),
  },
  {
    name: "a CNI agent Ready too briefly holds, with the time left (before the storm: it names the cause)",
    when: { agent: ["warming"] },
    expected: hold("cni_agent_not_ready", AGENT_WARMING_DETAIL, { retryAfterMs: AGENT_WAIT_MS }),
  },
  {
    name: "no Ready CNI agent holds, with no retry time",
    when: { agent: ["down"] },
    expected: hold("cni_agent_not_ready", AGENT_DOWN_DETAIL),
  },
  { name: "an open storm breaker holds", when: { storm: [true] }, expected: hold("storm", STORM_DETAIL) },
  {
    name: "delete mode holds at the node in-flight cap",
    when: { mode: ["delete"], inflight: ["node"] },
    expected: hold("node_inflight", NODE_INFLIGHT_DETAIL),
  },
  {
    name: "delete mode holds at the namespace in-flight cap",
    when: { mode: ["delete"], inflight: ["namespace"] },
    expected: hold("namespace_inflight", NS_INFLIGHT_DETAIL),
  },
  {
    name: "delete mode waits for its turn in the pace, last of all",
    when: { mode: ["delete"], paced: [true] },
    expected: hold("rate_limit", PACE_DETAIL, { retryAfterMs: PACE_WAIT_MS }),
  },
  { name: "delete mode deletes when nothing objects", when: { mode: ["delete"] }, expected: act("delete") },
  {
    name: "report mode reports when nothing before the in-flight caps and the pace objects",
    when: { mode: ["report"] },
    expected: act("report"),
  },
];

const matches = (when: When, c: Case): boolean =>
  (Object.keys(when) as (keyof Case)[]).every((dim) => (when[dim] as readonly unknown[]).includes(c[dim]));

const firstRow = (c: Case): Row | undefined => table.find((row) => matches(row.when, c));

const describeCase = (c: Case): string => JSON.stringify(c);

describe("decide", () => {
  describe("policy table", () => {
    const cases = allCases();
    const byRow = new Map<Row, Case[]>();
    for (const c of cases) {
      const row = firstRow(c);
      if (row) byRow.set(row, [...(byRow.get(row) ?? []), c]);
    }

    for (const row of table) {
      const rowCases = byRow.get(row) ?? [];
      it(`${row.name} (${rowCases.length} cases) → ${JSON.stringify(row.expected)}`, () => {
        expect(rowCases, "no case reaches this row").to.not.be.empty;
        for (const c of rowCases) expect(decide(inputOf(c)), describeCase(c)).to.deep.equal(row.expected);
      });
    }

    it("has a row for every combination of the dimensions", () => {
      expect(cases).to.have.length(3 * 3 * 2 * 2 * 2 * 2 * 2 * 3 * 2 * 3 * 3 * 2);
      for (const c of cases) expect(firstRow(c), describeCase(c)).to.not.equal(undefined);
    });
  });

  describe("order of the guards", () => {
    const owned = factsOf({ verdict: "broken", bare: false, labelled: false });
    const base = { facts: owned, verdict: verdicts.broken, label, alreadyHandled: false, deleteBarePods: false };
    const everything = guardsOf({ loop: "waiting", storm: true, agent: "warming", inflight: "node", paced: true });

    it("reports, one by one, the first objection left as earlier guards drop out", () => {
      const steps: [Parameters<typeof guardsOf>[0], Extract<Decision, { kind: "hold" }>["reason"]][] = [
        [{ loop: "waiting", storm: true, agent: "warming", inflight: "node", paced: true }, "loop_backoff"],
        [{ loop: "elapsed", storm: true, agent: "warming", inflight: "node", paced: true }, "cni_agent_not_ready"],
        [{ loop: "elapsed", storm: true, agent: "none", inflight: "node", paced: true }, "storm"],
        [{ loop: "none", storm: false, agent: "none", inflight: "node", paced: true }, "node_inflight"],
        [{ loop: "none", storm: false, agent: "none", inflight: "namespace", paced: true }, "namespace_inflight"],
        [{ loop: "none", storm: false, agent: "none", inflight: "none", paced: true }, "rate_limit"],
      ];
      for (const [guards, reason] of steps) {
        const decision = decide({ ...base, mode: "delete", guards: guardsOf(guards) });
        expect(decision, JSON.stringify(guards)).to.include({ kind: "hold", reason });
      }
    });

    it("label mode ignores every guard, even all at once", () => {
      expect(decide({ ...base, mode: "label", guards: everything })).to.deep.equal(act("label"));
      const terminal = factsOf({ verdict: "terminal", bare: true, labelled: false });
      expect(
        decide({
          ...base,
          facts: terminal,
          verdict: verdicts.terminal,
          mode: "label",
          alreadyHandled: true,
          guards: everything,
        }),
      ).to.deep.equal(act("label"));
    });

    it("report mode ignores the in-flight caps and the pace: nothing it does is in flight", () => {
      for (const inflight of ["node", "namespace"] as const) {
        const guards = guardsOf({ loop: "elapsed", storm: false, agent: "none", inflight, paced: true });
        expect(decide({ ...base, mode: "report", guards })).to.deep.equal(act("report"));
        expect(decide({ ...base, mode: "delete", guards })).to.have.property("kind", "hold");
      }
    });

    it("a bare pod is held before any guard is asked, unless --delete-bare-pods", () => {
      const bare = factsOf({ verdict: "broken", bare: true, labelled: false });
      expect(decide({ ...base, facts: bare, mode: "delete", guards: everything })).to.deep.equal(
        hold("bare_pod", BARE_DETAIL, { label: true }),
      );
      expect(
        decide({ ...base, facts: bare, mode: "delete", deleteBarePods: true, guards: everything }),
      ).to.deep.include({ reason: "loop_backoff" });
      expect(decide({ ...base, facts: bare, mode: "delete", deleteBarePods: true, guards: {} })).to.deep.equal(
        act("delete"),
      );
    });

    it("Istio's repair holds after the agent and before the storm; its fallback rides on the delete", () => {
      const meshRepair = { reason: "mesh_repair_pending", detail: "Istio may still repair it in place" } as const;
      const agentAndMesh = {
        ...guardsOf({ loop: "none", storm: true, agent: "warming", inflight: "none" }),
        meshRepair,
      };
      expect(decide({ ...base, mode: "delete", guards: agentAndMesh })).to.include({ reason: "cni_agent_not_ready" });
      const meshAndStorm = { ...guardsOf({ loop: "none", storm: true, agent: "none", inflight: "node" }), meshRepair };
      for (const mode of ["delete", "report"] as const) {
        expect(decide({ ...base, mode, guards: meshAndStorm })).to.deep.equal(
          hold("mesh_repair_pending", meshRepair.detail),
        );
      }
      const active = { reason: "mesh_repair_active", detail: "Istio deletes broken pods itself", waitMs: 5 } as const;
      expect(decide({ ...base, mode: "delete", guards: { meshRepair: active } })).to.deep.equal(
        hold("mesh_repair_active", active.detail, { retryAfterMs: 5 }),
      );
      expect(decide({ ...base, mode: "label", guards: { meshRepair: active } })).to.deep.equal(act("label"));
      const meshFallback = { basis: "failed_again", detail: "Istio's in-place repair did not fix it" } as const;
      expect(decide({ ...base, mode: "delete", guards: { meshFallback } })).to.deep.equal({
        kind: "act",
        action: "delete",
        fallback: meshFallback,
      });
      // The fallback passes the later guards like any delete.
      const pacedFallback = {
        ...guardsOf({ loop: "none", storm: false, agent: "none", inflight: "node" }),
        meshFallback,
      };
      expect(decide({ ...base, mode: "delete", guards: pacedFallback })).to.include({ reason: "node_inflight" });
    });

    it("an agent wait of 0 ms is still passed on as the retry time", () => {
      const guards: GuardView = { agent: { reason: "cni_agent_not_ready", waitMs: 0, detail: "just now" } };
      expect(decide({ ...base, mode: "delete", guards })).to.deep.equal(
        hold("cni_agent_not_ready", "just now", { retryAfterMs: 0 }),
      );
    });

    it("puts the pod's phase into the terminal hold's detail", () => {
      const succeeded = istioPod(brokenInit, { phase: "Succeeded" });
      expect(
        decide({ ...base, facts: succeeded, verdict: verdicts.terminal, mode: "report", guards: {} }),
      ).to.deep.equal(hold("terminal", "the pod has finished (phase Succeeded)"));
    });
  });

  describe("label matching", () => {
    const broken = verdicts.broken;
    const input = (facts: PodFacts, l: { key: string; value: string } = label): PolicyInput => ({
      facts,
      verdict: broken,
      mode: "label",
      label: l,
      alreadyHandled: false,
      deleteBarePods: false,
      guards: {},
    });

    it("acts when the label key is there with another value", () => {
      const facts = istioPod(brokenInit, { labels: { [label.key]: "false" } });
      expect(decide(input(facts))).to.deep.equal(act("label"));
    });

    it("matches an empty label value exactly", () => {
      const emptyValue = { key: "cni-repair.io/broken", value: "" };
      const withEmpty = istioPod(brokenInit, { labels: { [emptyValue.key]: "" } });
      expect(decide(input(withEmpty, emptyValue))).to.have.property("kind", "skip");
      expect(decide(input(istioPod(brokenInit), emptyValue))).to.deep.equal(act("label"));
    });

    it("is not fooled by inherited Object properties used as a label key", () => {
      const sneaky = { key: "constructor", value: "function Object() { [native code] }" };
      expect(decide(input(istioPod(brokenInit), sneaky))).to.deep.equal(act("label"));
      const bare = istioPod(brokenInit, { owner: undefined });
      expect(decide({ ...input(bare, sneaky), mode: "delete" })).to.deep.include({ reason: "bare_pod", label: true });
    });

    it("asks to label a bare pod only while the configured label is missing", () => {
      const other = { key: "example.com/repair", value: "needed" };
      const bare = istioPod(brokenInit, { owner: undefined, labels: { [other.key]: other.value } });
      expect(decide({ ...input(bare, other), mode: "delete" })).to.deep.include({ label: false });
      expect(decide({ ...input(bare, label), mode: "delete" })).to.deep.include({ label: true });
    });
  });

  describe("safety properties", () => {
    const guardFields = {
      loop: fc.record({ waitMs: fc.oneof(fc.constant(0), fc.nat(3_600_000)), detail: fc.string() }),
      storm: fc.record({ detail: fc.string() }),
      agent: fc.oneof(
        fc.record({
          reason: fc.constantFrom("cni_agent_not_ready" as const, "ztunnel_not_ready" as const),
          detail: fc.string(),
        }),
        fc.record({
          reason: fc.constantFrom("cni_agent_not_ready" as const, "ztunnel_not_ready" as const),
          waitMs: fc.nat(60_000),
          detail: fc.string(),
        }),
      ),
      inflight: fc.record({
        reason: fc.constantFrom("node_inflight" as const, "namespace_inflight" as const),
        detail: fc.string(),
      }),
      pace: fc.record({ waitMs: fc.nat(60_000), detail: fc.string() }),
    };
    const guardArb: fc.Arbitrary<GuardView> = fc.record(guardFields, { requiredKeys: [] });
    /** Exactly one guard, objecting or (a zero wait) not. */
    const oneGuardArb: fc.Arbitrary<GuardView> = fc.oneof(
      ...Object.entries(guardFields).map(([key, field]) => (field as fc.Arbitrary<unknown>).map((v) => ({ [key]: v }))),
    );
    type Input = {
      mode: Mode;
      verdict: VerdictName;
      labelled: boolean;
      bare: boolean;
      staticPod: boolean;
      alreadyHandled: boolean;
      deleteBarePods: boolean;
      phase: string | undefined;
      guards: GuardView;
    };
    const inputArb: fc.Arbitrary<Input> = fc.record({
      mode: fc.constantFrom<Mode>(...MODES),
      verdict: fc.constantFrom<VerdictName>(...VERDICTS),
      labelled: fc.boolean(),
      bare: fc.boolean(),
      staticPod: fc.boolean(),
      alreadyHandled: fc.boolean(),
      deleteBarePods: fc.boolean(),
      phase: fc.constantFrom(undefined, "Pending", "Running", "Failed", "Succeeded"),
      guards: guardArb,
    });
    // A broken, owned, unhandled pod: only the mode and the guards decide. A third of these face no guard, a third
    // one guard: the free input alone reaches a delete or a report less than once in a thousand.
    const actionableArb: fc.Arbitrary<Input> = fc.record({
      mode: fc.constantFrom<Mode>(...MODES),
      verdict: fc.constant<VerdictName>("broken"),
      labelled: fc.boolean(),
      bare: fc.constant(false),
      staticPod: fc.constant(false),
      alreadyHandled: fc.constant(false),
      deleteBarePods: fc.boolean(),
      phase: fc.constantFrom(undefined, "Pending", "Running"),
      guards: fc.oneof(fc.constant({}), oneGuardArb, guardArb),
    });
    const anyArb = fc.oneof(inputArb, actionableArb);
    const run = (i: Input): Decision =>
      decide({
        facts: istioPod(brokenInit, {
          phase: i.phase,
          labels: i.labelled ? { [label.key]: label.value } : {},
          ...(i.bare && { owner: undefined }),
          staticPod: i.staticPod,
        }),
        verdict: verdicts[i.verdict],
        mode: i.mode,
        label,
        alreadyHandled: i.alreadyHandled,
        deleteBarePods: i.deleteBarePods,
        guards: i.guards,
      });

    it("only acts with the configured mode's action, and never on a healthy pod", () => {
      fc.assert(
        fc.property(anyArb, (i) => {
          const d = run(i);
          if (i.verdict === "healthy") expect(d).to.deep.equal(HEALTHY);
          if (d.kind === "act") expect(d.action).to.equal(i.mode);
          if (d.kind === "healthy") expect(i.verdict).to.equal("healthy");
        }),
      );
    });

    it("never deletes or reports a terminal, handled, or (without --delete-bare-pods) bare pod", () => {
      fc.assert(
        fc.property(anyArb, (i) => {
          const d = run(i);
          if (d.kind !== "act" || d.action === "label") return;
          expect(i.verdict).to.equal("broken");
          expect(i.alreadyHandled).to.equal(false);
          expect(i.staticPod, "a static pod's mirror").to.equal(false);
          if (i.bare) expect(i.deleteBarePods).to.equal(true);
        }),
      );
    });

    describe("deletes exactly when no guard objects", () => {
      const objects = (g: GuardView) =>
        (g.loop?.waitMs ?? 0) > 0 ||
        g.storm !== undefined ||
        g.agent !== undefined ||
        g.inflight !== undefined ||
        (g.pace?.waitMs ?? 0) > 0;
      const deletableArb = actionableArb.map((i): Input => ({ ...i, mode: "delete" }));
      const branch = (i: Input) => {
        const d = run(i);
        return d.kind === "act" ? d.action : d.kind;
      };

      it("the inputs reach the delete and report branches often (fast-check statistics)", () => {
        const shares = branchShares(anyArb, branch);
        expect(shares.get("delete") ?? 0, "delete").to.be.above(5);
        expect(shares.get("report") ?? 0, "report").to.be.above(5);
      });

      it("never deletes while a guard objects, and deletes a deletable pod when none does", () => {
        fc.assert(
          fc.property(anyArb, (i) => {
            const d = run(i);
            if (d.kind === "act" && d.action === "delete") expect(objects(i.guards)).to.equal(false);
          }),
          { numRuns: 1_000 },
        );
        fc.assert(
          fc.property(deletableArb, (i) => {
            expect(run(i).kind === "act", JSON.stringify(i.guards)).to.equal(!objects(i.guards));
          }),
          { numRuns: 1_000 },
        );
      });
    });

    it("report mode never yields an in-flight or pace hold", () => {
      fc.assert(
        fc.property(anyArb, (i) => {
          const d = run({ ...i, mode: "report" });
          if (d.kind === "hold")
            expect(d.reason).to.not.be.oneOf(["node_inflight", "namespace_inflight", "rate_limit"]);
        }),
      );
    });

    it("asks for a label only on a bare-pod hold in delete mode", () => {
      fc.assert(
        fc.property(anyArb, (i) => {
          const d = run(i);
          if (d.kind === "hold" && d.label === true) {
            expect(d.reason).to.equal("bare_pod");
            expect(i.mode).to.equal("delete");
            expect(i.labelled).to.equal(false);
          }
        }),
      );
    });

    it("gives a retry time only for a running loop backoff, a warming node agent or a turn in the pace", () => {
      fc.assert(
        fc.property(anyArb, (i) => {
          const d = run(i);
          if (d.kind !== "hold" || d.retryAfterMs === undefined) return;
          if (d.reason === "loop_backoff") expect(d.retryAfterMs).to.equal(i.guards.loop?.waitMs).and.be.above(0);
          else if (d.reason === "cni_agent_not_ready" || d.reason === "ztunnel_not_ready")
            expect(d.retryAfterMs).to.equal(i.guards.agent?.waitMs);
          else if (d.reason === "rate_limit") expect(d.retryAfterMs).to.equal(i.guards.pace?.waitMs).and.be.above(0);
          else expect.fail(`retryAfterMs on a ${d.reason} hold`);
        }),
      );
    });

    it("reads the verdict's terminal flag, not the facts' phase", () => {
      fc.assert(
        fc.property(anyArb, (i) => {
          const d = run(i);
          // Only the terminal hold's wording names the phase.
          if (d.kind === "hold" && d.reason === "terminal") return;
          expect(d).to.deep.equal(run({ ...i, phase: "Running" }));
        }),
      );
    });
  });
});
