// One install of a preset combination, checked end to end on the real API server: the controller's command line
// enables exactly those rules, and the installed meshed-pods policy lets its ServiceAccount delete a broken pod of
// each enabled mesh and refuses (403, naming the policy) one of each mesh left out. The audit log is the record.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { parseConfig } from "../../src/config/config.js";
import { answersInForce, auditedActions, deniedBy, podActions } from "./admission.js";
import { createAmbientPod, DATAPLANE_MODE } from "./ambient-pods.js";
import { createPodInState } from "./broken-pods.js";
import type { ControlPlane } from "./control-plane.js";
import { createTestNamespace } from "./namespaces.js";
import { controllerContainer, installRendered, podCommand, type Rendered } from "./overlays.js";
import { meshedPod } from "./pod-fixtures.js";
import type { Preset } from "./presets.js";
import { waitFor } from "./wait.js";

const MESHES: readonly Preset[] = ["istio", "linkerd", "istio-ambient"];
const POLICY = "cni-repair-meshed-pods";
const PLACEMENT = { namespace: "cni-repair", nodeName: "node-a", podName: "cni-repair-0" };

/** A broken pod of the mesh as its injector (or ambient enrolment) leaves it, named after the mesh. */
async function createBrokenPod(api: CoreV1Api, namespace: string, mesh: Preset): Promise<void> {
  if (mesh === "istio-ambient") {
    // Enrolled by its label, running without the CNI agent's redirection annotation.
    await createAmbientPod(api, {
      namespace,
      name: mesh,
      labels: { [DATAPLANE_MODE]: "ambient" },
      runningSince: new Date(),
    });
  } else {
    await createPodInState(api, { namespace, name: mesh, mesh });
  }
}

/** The command line enables exactly these presets' rules; installed, the policy follows them (below). */
export async function expectInstallFollowsPresets(
  plane: ControlPlane,
  rendered: Rendered,
  presets: readonly Preset[],
): Promise<void> {
  const { args, env } = podCommand(controllerContainer(rendered), PLACEMENT);
  expect(parseConfig(args, env).config.rules.map((rule) => rule.name)).to.deep.equal([...presets]);
  const { token } = await installRendered(plane, rendered);
  await expectPolicyFollowsPresets(plane, token, presets);
}

/**
 * With the install's ServiceAccount token: a broken pod of each enabled mesh is deleted, one of each other mesh is
 * refused by the installed meshed-pods policy (not by RBAC: the wait is for the policy's own refusal). A policy that
 * never follows the presets fails the wait, naming them.
 */
export async function expectPolicyFollowsPresets(
  plane: ControlPlane,
  token: string,
  presets: readonly Preset[],
): Promise<void> {
  const api = plane.kubeConfig().makeApiClient(CoreV1Api);
  const namespace = await createTestNamespace(api, "pre");
  await api.createNamespacedPod({ namespace, body: meshedPod({ namespace, name: "probe", mesh: "none" }) });
  for (const mesh of MESHES) await createBrokenPod(api, namespace, mesh);
  const actions = podActions(plane, token, namespace);
  await waitFor(
    "the meshed-pods policy to refuse a pod of no mesh",
    async () => (await actions.remove("probe", true)).message.includes(deniedBy(POLICY)),
    { timeoutMs: 20_000, intervalMs: 250 },
  );
  const codes = Object.fromEntries(MESHES.map((mesh) => [mesh, presets.includes(mesh) ? 200 : 403]));
  await answersInForce(codes, (name) => actions.remove(name, true));

  const expected: string[] = [];
  for (const mesh of MESHES) {
    const outcome = await actions.remove(mesh);
    const enabled = presets.includes(mesh);
    expect(outcome.code, `${presets.join("+")}: delete of a ${mesh} pod`).to.equal(enabled ? 200 : 403);
    if (!enabled) expect(outcome.message).to.include(deniedBy(POLICY));
    expected.push(`delete ${mesh} ${enabled ? 200 : 403}`);
  }
  expect(auditedActions(plane, namespace).map(({ line }) => line)).to.deep.equal(expected);
  // The refused ones stay broken: gone, no later controller of another test finds them.
  await api.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 });
}
