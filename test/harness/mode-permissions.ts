// Least privilege per mode, as the API server's authorizer sees the controller's ServiceAccount: exactly the
// permissions of its mode (SelfSubjectRulesReview with its token), and refusals (SubjectAccessReview, as admin)
// for what it must never do. Installed by the kustomize overlays or by the Helm chart, the answer must be the same.
import type { V1ResourceAttributes } from "@kubernetes/client-node";
import { expect } from "chai";
import { baselinePermissions, effectivePermissions, isAllowed, serviceAccountIdentity } from "./access-review.js";
import type { ControlPlane } from "./control-plane.js";
import { INSTALL, type Overlay } from "./overlays.js";

const WATCH = [
  "get core/pods",
  "list core/pods",
  "watch core/pods",
  "create events.k8s.io/events",
  "create authorization.k8s.io/selfsubjectaccessreviews",
];
const DELETE = ["delete core/pods"];
const LABEL = ["patch core/pods/status"];
const LEASE = [
  "create coordination.k8s.io/leases",
  "get coordination.k8s.io/leases cni-repair",
  "update coordination.k8s.io/leases cni-repair",
];

/** The startup check reads its own admission policies and their bindings, by name only. */
const readPolicies = (...names: string[]) =>
  ["validatingadmissionpolicies", "validatingadmissionpolicybindings"].flatMap((resource) =>
    names.map((name) => `get admissionregistration.k8s.io/${resource} ${name}`),
  );
const MESHED_PODS = readPolicies("cni-repair-meshed-pods");
/**
 * The istio preset reads Istio's repair settings: two objects by name, in whichever namespace Istio's CNI agent
 * runs (a ClusterRole limited by resourceNames).
 */
const ISTIO_REPAIR = ["get", "list", "watch"].flatMap((verb) => [
  `${verb} core/configmaps istio-cni-config`,
  `${verb} apps/daemonsets istio-cni-node`,
]);

/** The per-mode table of the docs: in every namespace, and in the controller's own namespace on top. */
export const GRANTS: Record<Overlay, { everywhere: string[]; ownNamespace: string[] }> = {
  cluster: { everywhere: [...WATCH, ...DELETE, ...LABEL, ...MESHED_PODS, ...ISTIO_REPAIR], ownNamespace: LEASE },
  "per-node": {
    everywhere: [
      ...WATCH,
      ...DELETE,
      ...LABEL,
      ...readPolicies("cni-repair-meshed-pods", "cni-repair-own-node"),
      ...ISTIO_REPAIR,
    ],
    ownNamespace: [],
  },
  "label-only": { everywhere: [...WATCH, ...LABEL, ...MESHED_PODS, ...ISTIO_REPAIR], ownNamespace: LEASE },
  "dry-run": { everywhere: [...WATCH, ...DELETE, ...MESHED_PODS, ...ISTIO_REPAIR], ownNamespace: LEASE },
};

/** Never, in any mode; namespace "" asks about every namespace at once. */
const NEVER: V1ResourceAttributes[] = [
  { verb: "get", resource: "secrets", namespace: "" },
  { verb: "list", resource: "secrets", namespace: "" },
  { verb: "watch", resource: "secrets", namespace: "" },
  { verb: "get", resource: "secrets", namespace: INSTALL.namespace },
  { verb: "list", resource: "secrets", namespace: INSTALL.namespace },
  { verb: "patch", resource: "pods", namespace: "" },
  { verb: "update", resource: "pods", namespace: "" },
  { verb: "create", resource: "pods", namespace: "" },
  { verb: "deletecollection", resource: "pods", namespace: "" },
  { verb: "update", resource: "pods", subresource: "status", namespace: "" },
  { verb: "create", resource: "pods", subresource: "eviction", namespace: "" },
  { verb: "create", resource: "pods", subresource: "exec", namespace: "" },
  { verb: "get", resource: "configmaps", namespace: "" },
  { verb: "create", resource: "serviceaccounts", subresource: "token", namespace: INSTALL.namespace },
  { verb: "get", resource: "nodes" },
  { verb: "list", resource: "nodes" },
  { verb: "list", resource: "namespaces" },
  { verb: "create", resource: "events", namespace: "" },
  { verb: "patch", group: "events.k8s.io", resource: "events", namespace: "" },
  { verb: "delete", group: "events.k8s.io", resource: "events", namespace: "" },
  { verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: "kube-system", name: "cni-repair" },
  { verb: "list", group: "coordination.k8s.io", resource: "leases", namespace: INSTALL.namespace },
  { verb: "patch", group: "coordination.k8s.io", resource: "leases", namespace: INSTALL.namespace, name: "cni-repair" },
  {
    verb: "delete",
    group: "coordination.k8s.io",
    resource: "leases",
    namespace: INSTALL.namespace,
    name: "cni-repair",
  },
  { verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings" },
  { verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles" },
  { verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles" },
  { verb: "patch", group: "apps", resource: "deployments", namespace: INSTALL.namespace },
  { verb: "*", group: "*", resource: "*" },
];

const DELETE_PODS: V1ResourceAttributes = { verb: "delete", resource: "pods", namespace: "" };
const LABEL_PODS: V1ResourceAttributes = { verb: "patch", resource: "pods", subresource: "status", namespace: "" };
const ELECT: V1ResourceAttributes[] = [
  { verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: INSTALL.namespace },
  { verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: INSTALL.namespace, name: "cni-repair" },
  {
    verb: "update",
    group: "coordination.k8s.io",
    resource: "leases",
    namespace: INSTALL.namespace,
    name: "cni-repair",
  },
];

/** What the mode needs (allowed) and what the mode must not have (refused), beyond NEVER. */
const MODE_CHECKS: Record<Overlay, { allowed: V1ResourceAttributes[]; refused: V1ResourceAttributes[] }> = {
  cluster: { allowed: [DELETE_PODS, LABEL_PODS, ...ELECT], refused: [] },
  "per-node": { allowed: [DELETE_PODS, LABEL_PODS], refused: ELECT },
  "label-only": { allowed: [LABEL_PODS, ...ELECT], refused: [DELETE_PODS] },
  "dry-run": { allowed: [DELETE_PODS, ...ELECT], refused: [LABEL_PODS] },
};

const describeAttributes = (a: V1ResourceAttributes) =>
  `${a.verb} ${a.group || "core"}/${a.resource}${a.subresource ? `/${a.subresource}` : ""}` +
  `${a.name ? ` ${a.name}` : ""} in ${a.namespace === undefined ? "(cluster scope)" : a.namespace || "every namespace"}`;

/** The token's owner has exactly its mode's grants, in its own namespace (the Lease) and in any other. */
export async function expectExactGrants(plane: ControlPlane, token: string, mode: Overlay): Promise<void> {
  for (const [namespace, grants] of [
    [INSTALL.namespace, [...GRANTS[mode].everywhere, ...GRANTS[mode].ownNamespace]],
    ["some-app", GRANTS[mode].everywhere],
    ["kube-system", GRANTS[mode].everywhere],
  ] as const) {
    const baseline = await baselinePermissions(plane, namespace);
    const effective = await effectivePermissions(plane, token, namespace);
    expect(effective, `${mode} in ${namespace}`).to.deep.equal([...new Set([...baseline, ...grants])].sort());
  }
}

/** SubjectAccessReviews for the controller's ServiceAccount: allowed what its mode needs, refused the rest. */
export async function expectModeVerdicts(plane: ControlPlane, mode: Overlay): Promise<void> {
  const controller = serviceAccountIdentity(INSTALL.namespace, INSTALL.serviceAccount);
  const { allowed, refused } = MODE_CHECKS[mode];
  const verdicts = async (checks: V1ResourceAttributes[]) =>
    await Promise.all(
      checks.map(
        async (attributes) => `${describeAttributes(attributes)}: ${await isAllowed(plane, controller, attributes)}`,
      ),
    );
  const base = [
    { verb: "list", resource: "pods", namespace: "" },
    { verb: "watch", resource: "pods", namespace: "" },
    { verb: "create", group: "events.k8s.io", resource: "events", namespace: "some-app" },
    { verb: "create", group: "authorization.k8s.io", resource: "selfsubjectaccessreviews" },
  ];
  expect(await verdicts([...base, ...allowed])).to.deep.equal(
    [...base, ...allowed].map((attributes) => `${describeAttributes(attributes)}: true`),
  );
  expect(await verdicts([...NEVER, ...refused])).to.deep.equal(
    [...NEVER, ...refused].map((attributes) => `${describeAttributes(attributes)}: false`),
  );
}
