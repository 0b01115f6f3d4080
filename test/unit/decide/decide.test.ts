// Table-driven tests of decide: mode × verdict × already labelled × already handled to the safety decision.

import { expect } from "chai";
import fc from "fast-check";
import type { Mode } from "../../../src/config/config.js";
import { type Decision, decide } from "../../../src/decide/decide.js";
import type { Verdict } from "../../../src/detect/detect.js";
import { exited, init, istioPod } from "../detect/pod-facts-builder.js";

const label = { key: "cni-repair.io/broken", value: "true" } as const;

const verdicts = {
  healthy: { broken: false },
  broken: { broken: true, rule: "istio", reason: "istio-validation exited 126 (lastState)", terminal: false },
  terminal: { broken: true, rule: "istio", reason: "istio-validation exited 126 (state)", terminal: true },
} as const satisfies Record<string, Verdict>;
type VerdictName = keyof typeof verdicts;

const brokenInit = [init("istio-validation", "waiting", exited(126))];
const unlabelled = istioPod(brokenInit);
const labelled = istioPod(brokenInit, { labels: { [label.key]: label.value } });

const HEALTHY: Decision = { kind: "healthy" };
const act = (action: Mode): Decision => ({ kind: "act", action });
const HOLD_TERMINAL: Decision = { kind: "hold", reason: "terminal" };
const SKIP_LABELLED: Decision = { kind: "skip", reason: `already labelled ${label.key}=${label.value}` };
const SKIP_DELETED: Decision = { kind: "skip", reason: "already deleted by us" };
const SKIP_REPORTED: Decision = { kind: "skip", reason: "already reported" };

type Row = {
  readonly mode: Mode;
  readonly verdict: VerdictName;
  readonly labelled: readonly boolean[];
  readonly handled: readonly boolean[];
  readonly expected: Decision;
};
const ANY = [false, true] as const;

// The whole policy; `ANY` marks an input the row does not depend on.
const table: readonly Row[] = [
  // Healthy: nothing to do, whatever the mode or history.
  { mode: "delete", verdict: "healthy", labelled: ANY, handled: ANY, expected: HEALTHY },
  { mode: "label", verdict: "healthy", labelled: ANY, handled: ANY, expected: HEALTHY },
  { mode: "report", verdict: "healthy", labelled: ANY, handled: ANY, expected: HEALTHY },

  // Delete mode: act once per UID; never delete a finished pod. The label is irrelevant.
  { mode: "delete", verdict: "broken", labelled: ANY, handled: [false], expected: act("delete") },
  { mode: "delete", verdict: "broken", labelled: ANY, handled: [true], expected: SKIP_DELETED },
  { mode: "delete", verdict: "terminal", labelled: ANY, handled: ANY, expected: HOLD_TERMINAL },

  // Report mode: like delete, with its own skip reason.
  { mode: "report", verdict: "broken", labelled: ANY, handled: [false], expected: act("report") },
  { mode: "report", verdict: "broken", labelled: ANY, handled: [true], expected: SKIP_REPORTED },
  { mode: "report", verdict: "terminal", labelled: ANY, handled: ANY, expected: HOLD_TERMINAL },

  // Label mode: the label itself is the memory; terminal pods get labelled too; handled is ignored.
  { mode: "label", verdict: "broken", labelled: [false], handled: ANY, expected: act("label") },
  { mode: "label", verdict: "broken", labelled: [true], handled: ANY, expected: SKIP_LABELLED },
  { mode: "label", verdict: "terminal", labelled: [false], handled: ANY, expected: act("label") },
  { mode: "label", verdict: "terminal", labelled: [true], handled: ANY, expected: SKIP_LABELLED },
];

describe("decide", () => {
  describe("policy table", () => {
    for (const row of table) {
      for (const isLabelled of row.labelled) {
        for (const alreadyHandled of row.handled) {
          const name =
            `${row.mode} × ${row.verdict} × ${isLabelled ? "labelled" : "unlabelled"} × ` +
            `${alreadyHandled ? "handled" : "not handled"} → ${JSON.stringify(row.expected)}`;
          it(name, () => {
            const decision = decide({
              facts: isLabelled ? labelled : unlabelled,
              verdict: verdicts[row.verdict],
              mode: row.mode,
              label,
              alreadyHandled,
            });
            expect(decision).to.deep.equal(row.expected);
          });
        }
      }
    }

    it("covers every mode × verdict × labelled × handled combination exactly once", () => {
      const seen = new Set<string>();
      for (const row of table) {
        for (const l of row.labelled) {
          for (const h of row.handled) {
            const id = `${row.mode}/${row.verdict}/${l}/${h}`;
            expect(seen.has(id), id).to.equal(false);
            seen.add(id);
          }
        }
      }
      expect(seen.size).to.equal(3 * 3 * 2 * 2);
    });
  });

  describe("label matching", () => {
    const broken = verdicts.broken;

    it("acts when the label key is there with another value", () => {
      const facts = istioPod(brokenInit, { labels: { [label.key]: "false" } });
      expect(decide({ facts, verdict: broken, mode: "label", label, alreadyHandled: false })).to.deep.equal(
        act("label"),
      );
    });

    it("acts when only another label is there", () => {
      const facts = istioPod(brokenInit, { labels: { "linkerd.io/control-plane-ns": "linkerd" } });
      expect(decide({ facts, verdict: broken, mode: "label", label, alreadyHandled: true })).to.deep.equal(
        act("label"),
      );
    });

    it("matches an empty label value exactly", () => {
      const emptyValue = { key: "cni-repair.io/broken", value: "" };
      const withEmpty = istioPod(brokenInit, { labels: { [emptyValue.key]: "" } });
      expect(
        decide({ facts: withEmpty, verdict: broken, mode: "label", label: emptyValue, alreadyHandled: false }),
      ).to.have.property("kind", "skip");
      expect(
        decide({ facts: unlabelled, verdict: broken, mode: "label", label: emptyValue, alreadyHandled: false }),
      ).to.deep.equal(act("label"));
    });

    it("is not fooled by inherited Object properties used as a label key", () => {
      const sneaky = { key: "constructor", value: "function Object() { [native code] }" };
      expect(
        decide({ facts: unlabelled, verdict: broken, mode: "label", label: sneaky, alreadyHandled: false }),
      ).to.deep.equal(act("label"));
    });

    it("uses the configured key and value in the skip reason", () => {
      const other = { key: "example.com/repair", value: "needed" };
      const facts = istioPod(brokenInit, { labels: { [other.key]: other.value } });
      expect(decide({ facts, verdict: broken, mode: "label", label: other, alreadyHandled: false })).to.deep.equal({
        kind: "skip",
        reason: "already labelled example.com/repair=needed",
      });
    });
  });

  describe("safety properties", () => {
    const modeArb = fc.constantFrom<Mode>("delete", "label", "report");
    const verdictArb = fc.constantFrom<VerdictName>("healthy", "broken", "terminal");
    type Input = {
      mode: Mode;
      verdict: VerdictName;
      labelled: boolean;
      alreadyHandled: boolean;
      phase: string | undefined;
    };
    const inputArb: fc.Arbitrary<Input> = fc.record({
      mode: modeArb,
      verdict: verdictArb,
      labelled: fc.boolean(),
      alreadyHandled: fc.boolean(),
      phase: fc.constantFrom(undefined, "Pending", "Running", "Failed", "Succeeded"),
    });
    const run = (i: Input): Decision =>
      decide({
        facts: istioPod(brokenInit, { phase: i.phase, labels: i.labelled ? { [label.key]: label.value } : {} }),
        verdict: verdicts[i.verdict],
        mode: i.mode,
        label,
        alreadyHandled: i.alreadyHandled,
      });

    it("only acts with the configured mode's action, and never on a healthy pod", () => {
      fc.assert(
        fc.property(inputArb, (i) => {
          const d = run(i);
          if (i.verdict === "healthy") expect(d).to.deep.equal(HEALTHY);
          if (d.kind === "act") expect(d.action).to.equal(i.mode);
          if (d.kind === "healthy") expect(i.verdict).to.equal("healthy");
        }),
      );
    });

    it("never deletes or reports a terminal pod, and never repeats an action on a handled UID", () => {
      fc.assert(
        fc.property(inputArb, (i) => {
          const d = run(i);
          if (d.kind !== "act" || d.action === "label") return;
          expect(i.verdict).to.equal("broken");
          expect(i.alreadyHandled).to.equal(false);
        }),
      );
    });

    it("reads the verdict's terminal flag, not the facts' phase", () => {
      fc.assert(
        fc.property(inputArb, (i) => {
          const d = run(i);
          expect(d).to.deep.equal(run({ ...i, phase: "Running" }));
        }),
      );
    });
  });
});
