// The startup check of the admission policies that bound this identity: installed and enforced, or a warning.
// Never fatal: the controller works without them; they only limit what a stolen token could do.
import type { Config } from "../config/config.js";
import { admissionPolicyState, type PolicyState } from "../kube/admission-policies.js";
import type { KubeTransport } from "../kube/transport.js";
import { selfSubject } from "../kube/whoami.js";
import type { Logger } from "../observe/logger.js";

const THREAT_MODEL = "docs/threat-model.md";

export type Finding = {
  readonly level: "info" | "warn";
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
};

export type AdmissionFacts = {
  /** --admission-policies */
  readonly expected: readonly string[];
  readonly states: readonly PolicyState[];
  /** --node-name, in per-node deployment. */
  readonly nodeName: string | undefined;
  /** The node this identity's token names; null when the SelfSubjectReview failed. */
  readonly tokenNode: string | undefined | null;
};

/** What to log about the policies: one line per policy that is not enforced, or one line that all are. */
export function admissionFindings(facts: AdmissionFacts): Finding[] {
  if (facts.expected.length === 0) {
    return [
      {
        level: "warn",
        message: "no admission policies expected",
        fields: {
          consequence: `nothing but RBAC limits what this identity's token can delete or relabel (${THREAT_MODEL})`,
          fix: "install with the Helm chart or manifests/ (admissionPolicies.*), which set --admission-policies",
        },
      },
    ];
  }
  const findings = [...facts.states.flatMap(policyFinding), ...tokenNodeFindings(facts)];
  if (findings.length === 0) {
    findings.push({ level: "info", message: "admission policies checked", fields: { policies: facts.expected } });
  }
  return findings;
}

function policyFinding(policy: PolicyState): Finding[] {
  const warn = (message: string, fields: Record<string, unknown>): Finding[] => [
    { level: "warn", message, fields: { policy: policy.name, ...fields } },
  ];
  switch (policy.state) {
    case "enforced":
      return [];
    case "missing":
      return warn("admission policy missing", {
        missing: policy.missing.join(" and "),
        consequence: `the API server does not enforce it: RBAC alone limits this identity (${THREAT_MODEL})`,
      });
    case "not-enforced":
      return warn("admission policy not enforced", { detail: policy.detail });
    case "unknown":
      return warn("cannot check admission policy", { detail: policy.detail });
  }
}
/** Per-node: a policy that judges by the node the token names needs a token bound to a pod on this node. */
function tokenNodeFindings({ states, nodeName, tokenNode }: AdmissionFacts): Finding[] {
  const judges = states.find((policy) => policy.state === "enforced" && policy.judgesTokenNode);
  if (!judges || nodeName === undefined || tokenNode === null || tokenNode === nodeName) return [];
  return [
    {
      level: "warn",
      message: "token not bound to a pod on this node",
      fields: {
        node: nodeName,
        tokenNode: tokenNode ?? "(none)",
        consequence: `admission policy ${judges.name} refuses every delete and status patch on this node: run with the pod's own projected service-account token`,
      },
    },
  ];
}

/** Reads the expected policies and who we are, and logs the findings. */
export async function checkAdmissionPolicies(
  config: Pick<Config, "admissionPolicies" | "nodeName">,
  transport: Pick<KubeTransport, "request">,
  log: Logger,
): Promise<Finding[]> {
  const expected = config.admissionPolicies;
  // All at once: each is a round trip before the controller may start.
  const [states, tokenNode] = await Promise.all([
    Promise.all(expected.map((name) => admissionPolicyState(transport, name))),
    config.nodeName === undefined || expected.length === 0
      ? undefined
      : selfSubject(transport).then(
          (subject) => subject.nodeName,
          () => null,
        ),
  ]);
  const findings = admissionFindings({ expected, states, nodeName: config.nodeName, tokenNode });
  for (const finding of findings) log.log(finding.level, finding.message, finding.fields);
  return findings;
}
