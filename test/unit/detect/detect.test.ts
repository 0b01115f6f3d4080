// Table-driven tests of detect's contract for both presets and a custom rule.

import { expect } from "chai";
import { detect, type Verdict } from "../../../src/detect/detect.js";
import type { InitContainerFacts, PodFacts } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { ValidatorRule as Rule } from "../../../src/detect/rule.js";
import { exited, init, istioPod, linkerdPod, podFacts } from "../../support/pod-builders.js";

const istio = presetRule("istio") as Rule;
const linkerd = presetRule("linkerd") as Rule;

const custom: Rule = {
  name: "acme",
  initContainer: "acme-net-check",
  exitCodes: [3, 7, 42],
  messageContains: "redirect missing",
  requiredLabel: { key: "mesh.acme.io/enabled", value: "true" },
};

const NOT_BROKEN: Verdict = { broken: false };

type Case = { readonly name: string; readonly facts: PodFacts; readonly expected: Verdict };

const broken = (rule: string, reason: string, terminal = false): Verdict => ({ broken: true, rule, reason, terminal });

/** The same clauses for each preset: only the marker, the container name and the exit code differ. */
function presetCases(
  rule: Rule,
  code: number,
  marked: (inits: readonly InitContainerFacts[], o?: Partial<PodFacts>) => PodFacts,
  unmarked: (inits: readonly InitContainerFacts[]) => PodFacts,
): Case[] {
  const c = rule.initContainer;
  const loop = init(c, "waiting", exited(code));
  return [
    {
      name: "CrashLoop: waiting, lastState exit code",
      facts: marked([loop]),
      expected: broken(rule.name, `${c} exited ${code} (lastState)`),
    },
    {
      name: "running now, lastState exit code",
      facts: marked([init(c, "running", exited(code))]),
      expected: broken(rule.name, `${c} exited ${code} (lastState)`),
    },
    {
      name: "unknown state, lastState exit code",
      facts: marked([init(c, "unknown", exited(code))]),
      expected: broken(rule.name, `${c} exited ${code} (lastState)`),
    },
    {
      name: "restartPolicy Never: state exit code, phase Running",
      facts: marked([init(c, exited(code))], { restartPolicy: "Never", phase: "Running" }),
      expected: broken(rule.name, `${c} exited ${code} (state)`),
    },
    {
      name: "phase Failed: broken and terminal",
      facts: marked([init(c, exited(code))], { restartPolicy: "Never", phase: "Failed" }),
      expected: broken(rule.name, `${c} exited ${code} (state)`, true),
    },
    {
      name: "phase Succeeded: broken and terminal",
      facts: marked([init(c, "waiting", exited(code))], { phase: "Succeeded" }),
      expected: broken(rule.name, `${c} exited ${code} (lastState)`, true),
    },
    {
      name: "state is checked before lastState",
      facts: marked([init(c, exited(code), exited(code))]),
      expected: broken(rule.name, `${c} exited ${code} (state)`),
    },
    {
      name: "state another failure, lastState exit code",
      facts: marked([init(c, exited(1), exited(code))]),
      expected: broken(rule.name, `${c} exited ${code} (lastState)`),
    },
    {
      name: "validator exited 0 now, lastState exit code",
      facts: marked([init(c, exited(0), exited(code))]),
      expected: NOT_BROKEN,
    },
    {
      name: "exit 0 even with reason not Completed",
      facts: marked([
        init(
          c,
          { exitCode: 0, reason: undefined, message: undefined, startedAtMs: undefined, finishedAtMs: undefined },
          exited(code),
        ),
      ]),
      expected: NOT_BROKEN,
    },
    {
      name: "another init container exited the code",
      facts: marked([init("other-init", "waiting", exited(code))]),
      expected: NOT_BROKEN,
    },
    {
      name: "another init container failing, validator fine",
      facts: marked([init("other-init", exited(code)), init(c, exited(0))]),
      expected: NOT_BROKEN,
    },
    { name: "marker missing", facts: unmarked([loop]), expected: NOT_BROKEN },
    { name: "deleting", facts: marked([loop], { deleting: true }), expected: NOT_BROKEN },
    {
      name: "deleting and terminal",
      facts: marked([init(c, exited(code))], { deleting: true, phase: "Failed" }),
      expected: NOT_BROKEN,
    },
    {
      name: "exit code not in the list (lastState)",
      facts: marked([init(c, "waiting", exited(1))]),
      expected: NOT_BROKEN,
    },
    { name: "exit code not in the list (state)", facts: marked([init(c, exited(137))]), expected: NOT_BROKEN },
    { name: "no lastState and not terminated", facts: marked([init(c, "waiting")]), expected: NOT_BROKEN },
    { name: "running for the first time", facts: marked([init(c, "running")]), expected: NOT_BROKEN },
    { name: "no init container statuses yet", facts: marked([]), expected: NOT_BROKEN },
  ];
}

const customLabel = { "mesh.acme.io/enabled": "true" };
const customPod = (inits: readonly InitContainerFacts[], o: Partial<PodFacts> = {}): PodFacts =>
  podFacts({ labels: customLabel, initContainers: inits, ...o });
const msg = "validation failed: iptables redirect missing for port 15001";

const customCases: Case[] = [
  ...[3, 7, 42].map(
    (code): Case => ({
      name: `exit ${code} with the message substring`,
      facts: customPod([init("acme-net-check", "waiting", exited(code, msg))]),
      expected: broken("acme", `acme-net-check exited ${code} (lastState)`),
    }),
  ),
  {
    name: "restartPolicy Never with the message substring",
    facts: customPod([init("acme-net-check", exited(7, msg))], { restartPolicy: "Never", phase: "Running" }),
    expected: broken("acme", "acme-net-check exited 7 (state)"),
  },
  {
    name: "state code matches but message does not, lastState matches",
    facts: customPod([init("acme-net-check", exited(7, "other"), exited(42, msg))]),
    expected: broken("acme", "acme-net-check exited 42 (lastState)"),
  },
  {
    name: "message mismatch",
    facts: customPod([init("acme-net-check", "waiting", exited(3, "dns lookup failed"))]),
    expected: NOT_BROKEN,
  },
  { name: "message absent", facts: customPod([init("acme-net-check", "waiting", exited(3))]), expected: NOT_BROKEN },
  {
    name: "exit code not in the list",
    facts: customPod([init("acme-net-check", "waiting", exited(4, msg))]),
    expected: NOT_BROKEN,
  },
  {
    name: "label with another value",
    facts: customPod([init("acme-net-check", "waiting", exited(3, msg))], {
      labels: { "mesh.acme.io/enabled": "false" },
    }),
    expected: NOT_BROKEN,
  },
  {
    name: "label missing (annotation with the same key does not count)",
    facts: customPod([init("acme-net-check", "waiting", exited(3, msg))], { labels: {}, annotations: customLabel }),
    expected: NOT_BROKEN,
  },
  {
    name: "validator exited 0 now",
    facts: customPod([init("acme-net-check", exited(0), exited(3, msg))]),
    expected: NOT_BROKEN,
  },
];

describe("detect", () => {
  const suites: [string, readonly Rule[], Case[]][] = [
    ["istio preset", [istio], presetCases(istio, 126, istioPod, (inits) => podFacts({ initContainers: inits }))],
    [
      "linkerd preset",
      [linkerd],
      presetCases(linkerd, 95, linkerdPod, (inits) =>
        // The marker key as an annotation is not the label the rule asks for.
        podFacts({ annotations: { "linkerd.io/control-plane-ns": "linkerd" }, initContainers: inits }),
      ),
    ],
    ["custom rule", [custom], customCases],
  ];
  for (const [suite, rules, cases] of suites) {
    describe(suite, () => {
      for (const c of cases) {
        it(c.name, () => {
          expect(detect(c.facts, rules)).to.deep.equal(c.expected);
        });
      }
    });
  }

  describe("across rules", () => {
    const both = istioPod([init("istio-validation", "waiting", exited(126))], {
      labels: { "linkerd.io/control-plane-ns": "linkerd" },
    });
    const bothBroken = podFacts({
      annotations: { "sidecar.istio.io/status": "{}" },
      labels: { "linkerd.io/control-plane-ns": "linkerd" },
      initContainers: [
        init("istio-validation", "waiting", exited(126)),
        init("linkerd-network-validator", "waiting", exited(95)),
      ],
    });

    it("a rule that does not match lets the next one decide", () => {
      expect(detect(both, [linkerd, istio])).to.deep.equal(broken("istio", "istio-validation exited 126 (lastState)"));
    });

    it("the first matching rule wins", () => {
      expect(detect(bothBroken, [linkerd, istio])).to.include({ broken: true, rule: "linkerd" });
      expect(detect(bothBroken, [istio, linkerd])).to.include({ broken: true, rule: "istio" });
    });

    it("no rules: never broken", () => {
      expect(detect(bothBroken, [])).to.deep.equal(NOT_BROKEN);
    });

    it("a rule with both markers needs both", () => {
      const strict: Rule = {
        ...istio,
        name: "strict",
        requiredAnnotation: { key: "sidecar.istio.io/status" },
        requiredLabel: { key: "security.istio.io/tlsMode", value: "istio" },
      };
      const pod = istioPod([init("istio-validation", "waiting", exited(126))]);
      expect(detect(pod, [strict])).to.deep.equal(NOT_BROKEN);
      const labelled = { ...pod, labels: { "security.istio.io/tlsMode": "istio" } };
      expect(detect(labelled, [strict])).to.include({ broken: true, rule: "strict" });
    });

    it("an annotation marker with a value must equal it", () => {
      const rev: Rule = { ...istio, name: "rev", requiredAnnotation: { key: "istio.io/rev", value: "canary" } };
      const inits = [init("istio-validation", "waiting", exited(126))];
      expect(
        detect(podFacts({ annotations: { "istio.io/rev": "stable" }, initContainers: inits }), [rev]),
      ).to.deep.equal(NOT_BROKEN);
      expect(detect(podFacts({ annotations: { "istio.io/rev": "canary" }, initContainers: inits }), [rev])).to.include({
        broken: true,
      });
    });

    it("a marker without value matches an empty value", () => {
      const pod = linkerdPod([init("linkerd-network-validator", "waiting", exited(95))], {
        labels: { "linkerd.io/control-plane-ns": "" },
      });
      expect(detect(pod, [linkerd])).to.include({ broken: true });
    });

    it("an empty messageContains is no condition", () => {
      const anyMessage: Rule = { ...custom, messageContains: "" };
      const pod = customPod([init("acme-net-check", "waiting", exited(3))]);
      expect(detect(pod, [anyMessage])).to.include({ broken: true });
    });
  });
});
