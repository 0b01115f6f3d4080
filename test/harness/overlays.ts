// The shipped kustomize overlays (manifests/overlays): rendered by the real kubectl, installed on the test control
// plane with server-side apply, and the command line a pod of their workload would run.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type KubernetesObject,
  loadAllYaml,
  type V1ClusterRole,
  type V1ClusterRoleBinding,
  type V1Container,
  type V1DaemonSet,
  type V1Deployment,
  type V1Role,
  type V1RoleBinding,
} from "@kubernetes/client-node";
import { baselinePermissions, effectivePermissions, permissionsOf } from "./access-review.js";
import type { ControlPlane } from "./control-plane.js";
import { kubectl } from "./kubectl.js";
import { serviceAccountToken } from "./service-account-files.js";
import { waitFor } from "./wait.js";

export const OVERLAYS = ["cluster", "per-node", "label-only", "dry-run"] as const;
export type Overlay = (typeof OVERLAYS)[number];

/** Where every overlay installs the controller, and the identity it runs as. */
export const INSTALL = { namespace: "cni-repair", serviceAccount: "cni-repair" } as const;
/** The label the base puts on every object: what an uninstall selects. */
const PART_OF = "app.kubernetes.io/part-of=cni-repair";

export type Rendered = {
  readonly overlay: Overlay;
  readonly yaml: string;
  readonly objects: readonly KubernetesObject[];
};

/** manifests/, found from the compiled location (dist/test/harness) or the source one. */
export function manifestsDir(): string {
  let dir = fileURLToPath(new URL(".", import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, "manifests", "overlays"))) return join(dir, "manifests");
    dir = join(dir, "..");
  }
  throw new Error("cannot find manifests/overlays above the test harness");
}

/** `kubectl kustomize manifests/overlays/<overlay>`, as `kubectl apply -k` would render it. */
export async function renderOverlay(overlay: Overlay): Promise<Rendered> {
  const yaml = await kubectl(["kustomize", join(manifestsDir(), "overlays", overlay)]);
  return { overlay, yaml, objects: loadAllYaml(yaml) as KubernetesObject[] };
}

export function objectsOfKind<T extends KubernetesObject>(rendered: Rendered, kind: string): T[] {
  return rendered.objects.filter((object) => object.kind === kind) as T[];
}

/** The overlay's one workload: a Deployment or a DaemonSet. */
export function workloadOf(rendered: Rendered): V1Deployment | V1DaemonSet {
  const workloads = rendered.objects.filter((object) => object.kind === "Deployment" || object.kind === "DaemonSet");
  if (workloads.length !== 1) throw new Error(`${rendered.overlay}: expected one workload, got ${workloads.length}`);
  return workloads[0] as V1Deployment | V1DaemonSet;
}

export function controllerContainer(rendered: Rendered): V1Container {
  const containers = workloadOf(rendered).spec?.template.spec?.containers ?? [];
  if (containers.length !== 1) throw new Error(`${rendered.overlay}: expected one container, got ${containers.length}`);
  return containers[0] as V1Container;
}

/** What the downward API would fill in for one pod of the workload. */
export type PodPlacement = { readonly namespace: string; readonly nodeName: string; readonly podName: string };

const DOWNWARD_FIELDS: Record<string, (placement: PodPlacement) => string> = {
  "metadata.namespace": (placement) => placement.namespace,
  "metadata.name": (placement) => placement.podName,
  "spec.nodeName": (placement) => placement.nodeName,
};

/** The image's entry point (image/build.sh's --entrypoint): Node, then the CLI's script. */
export function imageEntrypoint(): { node: string; script: string } {
  const build = readFileSync(join(manifestsDir(), "..", "image", "build.sh"), "utf8");
  const [node, script] = /--entrypoint (\S+),(\S+)/.exec(build)?.slice(1) ?? [];
  if (node === undefined || script === undefined) throw new Error("image/build.sh sets no --entrypoint node,script");
  return { node, script };
}

/**
 * The container's args and env as the kubelet would start it: downward-API fields and $(VAR) references resolved.
 * nodeFlags: the Node flags a command override puts between the image's Node and its script (NODE_OPTIONS is in env).
 */
export function podCommand(
  container: V1Container,
  placement: PodPlacement,
): { args: string[]; env: Record<string, string>; nodeFlags: string[] } {
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const field = variable.valueFrom?.fieldRef?.fieldPath;
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (field !== undefined && DOWNWARD_FIELDS[field]) env[variable.name] = DOWNWARD_FIELDS[field](placement);
    else
      throw new Error(`env ${variable.name}: only values and ${Object.keys(DOWNWARD_FIELDS).join(", ")} are handled`);
  }
  const args = (container.args ?? []).map((arg) =>
    arg.replace(/\$\((\w+)\)/g, (ref, name: string) => env[name] ?? ref),
  );
  return { args, env, nodeFlags: nodeFlagsOf(container.command) };
}

/** A command override may only add Node flags to the image's entry point: anything else would run another program. */
function nodeFlagsOf(command: readonly string[] | undefined): string[] {
  if (!command?.length) return [];
  const { node, script } = imageEntrypoint();
  const flags = command.slice(1, -1);
  if (command[0] !== node || command.at(-1) !== script || !flags.every((flag) => flag.startsWith("--"))) {
    throw new Error(`command ${JSON.stringify(command)} is not the image's entry point (${node} ${script}) with flags`);
  }
  return flags;
}

const boundToController = (binding: V1RoleBinding | V1ClusterRoleBinding) =>
  (binding.subjects ?? []).some(
    (subject) =>
      subject.kind === "ServiceAccount" &&
      subject.name === INSTALL.serviceAccount &&
      subject.namespace === INSTALL.namespace,
  );

/** The rendered RBAC: its roles, and the bindings of roles to the controller's ServiceAccount. */
function rbacOf(rendered: Rendered) {
  const roles = [...objectsOfKind<V1Role>(rendered, "Role"), ...objectsOfKind<V1ClusterRole>(rendered, "ClusterRole")];
  const bindings = [
    ...objectsOfKind<V1RoleBinding>(rendered, "RoleBinding"),
    ...objectsOfKind<V1ClusterRoleBinding>(rendered, "ClusterRoleBinding"),
  ].filter(boundToController);
  return { roles, bindings };
}

/**
 * Every grant of the rendered RBAC to the controller's ServiceAccount, as "where: verb group/resource [name]"
 * ("cluster-wide" for a ClusterRoleBinding, else the RoleBinding's namespace). A binding to a role the rendering
 * does not hold is an error: its grants could not be told.
 */
export function controllerGrants(rendered: Rendered): string[] {
  const { roles, bindings } = rbacOf(rendered);
  const grants = bindings.flatMap((binding) => {
    const role = roles.find((r) => r.kind === binding.roleRef.kind && r.metadata?.name === binding.roleRef.name);
    if (!role) throw new Error(`${binding.metadata?.name} refers to ${binding.roleRef.name}, which is not rendered`);
    const where = binding.kind === "ClusterRoleBinding" ? "cluster-wide" : (binding.metadata?.namespace ?? "");
    return permissionsOf(role.rules ?? []).map((permission) => `${where}: ${permission}`);
  });
  return [...new Set(grants)].sort();
}

/** Rendered roles that no binding gives the controller: grants nobody accounts for. */
export function rolesNotBoundToController(rendered: Rendered): string[] {
  const { roles, bindings } = rbacOf(rendered);
  return roles
    .filter((role) => !bindings.some((b) => b.roleRef.kind === role.kind && b.roleRef.name === role.metadata?.name))
    .map((role) => `${role.kind}/${role.metadata?.name}`);
}

/**
 * Permissions the rendered RBAC grants the controller's ServiceAccount in a namespace (its own by default): every
 * ClusterRole bound to it, and the Roles bound in that namespace (Istio's, for its repair settings, is elsewhere).
 */
export function renderedPermissions(rendered: Rendered, namespace: string = INSTALL.namespace): string[] {
  const permissions = controllerGrants(rendered)
    .map((grant) => /^([^:]+): (.*)$/.exec(grant)?.slice(1) ?? [])
    .filter(([where]) => where === "cluster-wide" || where === namespace)
    .map(([, permission]) => permission ?? "");
  return [...new Set(permissions)].sort();
}

/** Deletes what an earlier install left behind (the Namespace stays: without a namespace controller it would never go). */
export async function uninstall(plane: ControlPlane): Promise<void> {
  await kubectl(
    [
      "delete",
      "clusterrole,clusterrolebinding,priorityclass,validatingadmissionpolicy,validatingadmissionpolicybinding",
      "-l",
      PART_OF,
      "--ignore-not-found",
    ],
    { plane },
  );
  await kubectl(
    [
      "delete",
      "--namespace",
      INSTALL.namespace,
      "deployment,daemonset,poddisruptionbudget,service,networkpolicy,role,rolebinding,serviceaccount",
      "-l",
      PART_OF,
      "--ignore-not-found",
    ],
    { plane },
  );
  await kubectl(["delete", "--namespace", INSTALL.namespace, "lease", "cni-repair", "--ignore-not-found"], { plane });
}

export type Installed = {
  readonly rendered: Rendered;
  /** kubectl apply's report: one "kind/name serverside-applied" line per object. */
  readonly applied: readonly string[];
  /** A TokenRequest token of the controller's ServiceAccount. */
  readonly token: string;
};

/** The namespace every overlay installs into, applied once on its own (manifests/namespace), as the docs say. */
export async function applyNamespace(plane: ControlPlane): Promise<void> {
  await kubectl(
    ["apply", "--server-side", "--field-manager=cni-repair-tests", "-k", join(manifestsDir(), "namespace")],
    {
      plane,
    },
  );
}

/**
 * Replaces any earlier install with this overlay, as `kubectl apply --server-side` of its rendering (after the
 * namespace, applied on its own), and waits until
 * the authorizer grants the ServiceAccount exactly what the rendered RBAC says on top of what every authenticated
 * identity may do (the authorizer reads RBAC through an informer, so grants and revocations take a moment).
 */
export async function installOverlay(plane: ControlPlane, overlay: Overlay): Promise<Installed> {
  return await installRendered(plane, await renderOverlay(overlay));
}

/** installOverlay of any rendering of the install (an overlay, or the chart with values of a test). */
export async function installRendered(plane: ControlPlane, rendered: Rendered): Promise<Installed> {
  const overlay = rendered.overlay;
  await uninstall(plane);
  await applyNamespace(plane);
  const report = await kubectl(
    ["apply", "--server-side", "--validate=strict", "--field-manager=cni-repair-tests", "-f", "-"],
    {
      plane,
      input: rendered.yaml,
    },
  );
  const token = await serviceAccountToken(plane, INSTALL.namespace, INSTALL.serviceAccount);
  const baseline = await baselinePermissions(plane, INSTALL.namespace);
  const expected = [...new Set([...baseline, ...renderedPermissions(rendered)])].sort().join("\n");
  await waitFor(
    `the ${overlay} overlay's RBAC to take effect`,
    async () => (await effectivePermissions(plane, token, INSTALL.namespace)).join("\n") === expected,
    { timeoutMs: 10_000, intervalMs: 200 },
  );
  return { rendered, applied: report.trim().split("\n"), token };
}
