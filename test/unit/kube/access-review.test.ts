// requiredPermissions per mode, missingPermissions' review requests, and describeMissing's RBAC text.
import { expect } from "chai";
import {
  describeMissing,
  istioRepairPermissions,
  missingPermissions,
  type Permission,
  requiredPermissions,
} from "../../../src/kube/access-review.js";
import { scriptedTransport } from "../../support/scripted-transport.js";

const names = (permissions: readonly Permission[]) =>
  permissions.map(
    (p) =>
      `${p.verb} ${p.group ? `${p.group}/` : ""}${p.resource}${p.subresource ? `/${p.subresource}` : ""}` +
      (p.namespace ? ` @${p.namespace}` : ""),
  );

describe("requiredPermissions", () => {
  const base = { deleteBarePods: false, electing: false, leaseNamespace: "cni-repair" } as const;
  const cases: [string, Parameters<typeof requiredPermissions>[0], string[]][] = [
    [
      "delete mode, bare pods labelled",
      { ...base, mode: "delete" },
      ["get pods", "list pods", "watch pods", "delete pods", "patch pods/status", "create events.k8s.io/events"],
    ],
    [
      "delete mode with --delete-bare-pods",
      { ...base, mode: "delete", deleteBarePods: true },
      ["get pods", "list pods", "watch pods", "delete pods", "create events.k8s.io/events"],
    ],
    [
      "label mode",
      { ...base, mode: "label", deleteBarePods: true },
      ["get pods", "list pods", "watch pods", "patch pods/status", "create events.k8s.io/events"],
    ],
    [
      "report mode (dry-run deletes)",
      { ...base, mode: "report" },
      ["get pods", "list pods", "watch pods", "delete pods", "create events.k8s.io/events"],
    ],
    [
      "electing, one watched namespace",
      { ...base, mode: "report", electing: true, watchNamespace: "apps" },
      [
        "get pods @apps",
        "list pods @apps",
        "watch pods @apps",
        "delete pods @apps",
        "create events.k8s.io/events @apps",
        "get coordination.k8s.io/leases @cni-repair",
        "create coordination.k8s.io/leases @cni-repair",
        "update coordination.k8s.io/leases @cni-repair",
      ],
    ],
    [
      "startup taints managed: nodes read and patched",
      { ...base, mode: "delete", deleteBarePods: true, startupTaints: "write" },
      [
        "get pods",
        "list pods",
        "watch pods",
        "delete pods",
        "create events.k8s.io/events",
        "get nodes",
        "list nodes",
        "watch nodes",
        "patch nodes",
      ],
    ],
    [
      "startup taints reported: nodes only read",
      { ...base, mode: "report", startupTaints: "report" },
      [
        "get pods",
        "list pods",
        "watch pods",
        "delete pods",
        "create events.k8s.io/events",
        "list nodes",
        "watch nodes",
      ],
    ],
  ];
  for (const [name, options, expected] of cases) {
    it(name, () => {
      expect(names(requiredPermissions(options))).to.deep.equal(expected);
    });
  }
});

describe("missingPermissions", () => {
  const SSRR = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
  const SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
  const permissions = requiredPermissions({
    mode: "delete",
    deleteBarePods: false,
    electing: true,
    leaseNamespace: "cni-repair",
  });
  const verbOf = (body: unknown) =>
    (body as { spec: { resourceAttributes: { verb: string } } }).spec.resourceAttributes.verb;

  it("asks one rules review per namespace, and an access review only for what the rules do not grant", async () => {
    const calls: { path: string; body: unknown }[] = [];
    const { transport } = scriptedTransport({
      request: (call) => {
        calls.push({ path: call.path, body: call.body });
        if (call.path === SSRR) {
          const namespace = (call.body as { spec: { namespace: string } }).spec.namespace;
          // Everything but delete, cluster-wide; the Lease in its namespace.
          const rules =
            namespace === "cni-repair"
              ? [{ verbs: ["*"], apiGroups: ["coordination.k8s.io"], resources: ["leases"] }]
              : [
                  { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"] },
                  { verbs: ["patch"], apiGroups: [""], resources: ["*/status"] },
                  { verbs: ["create"], apiGroups: ["events.k8s.io"], resources: ["events"] },
                ];
          return { body: { status: { resourceRules: rules, incomplete: false } } };
        }
        return { body: { status: { allowed: verbOf(call.body) !== "delete" } } };
      },
    });
    const missing = await missingPermissions(transport, permissions);
    expect(missing).to.deep.equal([{ verb: "delete", group: "", resource: "pods" }]);
    const reviewed = calls.filter((c) => c.path === SSRR).map((c) => (c.body as { spec: unknown }).spec);
    // Cluster-wide is asked in a namespace no namespace can be called (no RoleBinding can be there).
    expect(reviewed).to.deep.equal([{ namespace: "cni-repair:every-namespace" }, { namespace: "cni-repair" }]);
    expect(calls.filter((c) => c.path === SSAR).map((c) => verbOf(c.body))).to.deep.equal(["delete"]);
  });

  it("a rules review that fails or says nothing leaves every permission to its own access review, all at once", async () => {
    const reviews: unknown[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const { transport } = scriptedTransport({
      request: async (call) => {
        if (call.path === SSRR)
          return call.body && JSON.stringify(call.body).includes("every") ? { status: 500 } : { body: {} };
        expect([call.method, call.path]).to.deep.equal(["POST", SSAR]);
        reviews.push(call.body);
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return { body: { status: { allowed: verbOf(call.body) !== "delete" } } };
      },
    });
    const missing = await missingPermissions(transport, permissions);
    expect(missing).to.deep.equal([{ verb: "delete", group: "", resource: "pods" }]);
    expect(maxInFlight).to.equal(permissions.length);
    expect(reviews[4]).to.deep.equal({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { verb: "patch", group: "", resource: "pods", subresource: "status" } },
    });
    expect(reviews.at(-1)).to.have.nested.property("spec.resourceAttributes.namespace", "cni-repair");
  });

  it("what the rules grant is held without an access review (rules are additive: one listed is granted)", async () => {
    const { transport, calls } = scriptedTransport({
      request: (call) =>
        call.path === SSRR
          ? { body: { status: { resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }] } } }
          : { body: { status: { allowed: false } } },
    });
    expect(await missingPermissions(transport, permissions)).to.deep.equal([]);
    expect(calls.filter((c) => c.path === SSAR)).to.have.length(0);
  });
});

describe("istioRepairPermissions", () => {
  it("reads Istio's two objects by name in the agent's namespace, and the RBAC text says a Role there", () => {
    const permissions = istioRepairPermissions("istio-system");
    expect(names(permissions)).to.deep.equal([
      "get configmaps @istio-system",
      "get apps/daemonsets @istio-system",
      "list configmaps @istio-system",
      "list apps/daemonsets @istio-system",
      "watch configmaps @istio-system",
      "watch apps/daemonsets @istio-system",
    ]);
    expect(permissions.map((p) => p.name)).to.deep.equal([
      "istio-cni-config",
      "istio-cni-node",
      "istio-cni-config",
      "istio-cni-node",
      "istio-cni-config",
      "istio-cni-node",
    ]);
    expect(describeMissing(permissions)).to.include(
      "rules to add to a Role in namespace istio-system (bound with a RoleBinding there):",
    );
    expect(describeMissing(permissions)).to.include('resourceNames: ["istio-cni-config"]');
  });
});

describe("describeMissing", () => {
  it("is empty when nothing is missing", () => {
    expect(describeMissing([])).to.equal("");
  });

  it("lists each permission and groups the rules into a ClusterRole and a Role per namespace", () => {
    const text = describeMissing([
      { verb: "delete", group: "", resource: "pods" },
      { verb: "patch", group: "", resource: "pods", subresource: "status" },
      { verb: "create", group: "events.k8s.io", resource: "events" },
      { verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: "cni-repair" },
      { verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "cni-repair" },
      { verb: "list", group: "", resource: "pods" },
      { verb: "list", group: "", resource: "pods", namespace: "apps" },
    ]);
    expect(text).to.equal(
      [
        "missing 7 permission(s):",
        "  - delete pods (cluster-wide)",
        "  - patch pods/status (cluster-wide)",
        "  - create events (cluster-wide)",
        "  - get leases in namespace cni-repair",
        "  - create leases in namespace cni-repair",
        "  - list pods (cluster-wide)",
        "  - list pods in namespace apps",
        "rules to add to a ClusterRole (bound with a ClusterRoleBinding):",
        '- apiGroups: [""]',
        '  resources: ["pods"]',
        '  verbs: ["delete", "list"]',
        '- apiGroups: [""]',
        '  resources: ["pods/status"]',
        '  verbs: ["patch"]',
        '- apiGroups: ["events.k8s.io"]',
        '  resources: ["events"]',
        '  verbs: ["create"]',
        "rules to add to a Role in namespace apps (bound with a RoleBinding there):",
        '- apiGroups: [""]',
        '  resources: ["pods"]',
        '  verbs: ["list"]',
        "rules to add to a Role in namespace cni-repair (bound with a RoleBinding there):",
        '- apiGroups: ["coordination.k8s.io"]',
        '  resources: ["leases"]',
        '  verbs: ["create", "get"]',
      ].join("\n"),
    );
  });

  it("merges resources of one API group that miss the same verbs into one rule", () => {
    const text = describeMissing([
      { verb: "watch", group: "", resource: "pods" },
      { verb: "watch", group: "", resource: "nodes" },
    ]);
    expect(text).to.contain('- apiGroups: [""]\n  resources: ["pods", "nodes"]\n  verbs: ["watch"]');
  });
});
