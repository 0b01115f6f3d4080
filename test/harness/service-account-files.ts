// What a pod's container sees of its ServiceAccount: the token, the CA and the namespace, laid out under a root.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import type { ControlPlane } from "./control-plane.js";

export type InCluster = {
  /** Environment for the controller process: as inside a pod, with the service-account files under root. */
  readonly env: Record<string, string>;
  cleanup(): void;
};

/** A pod the token is bound to, as the kubelet binds the token it projects: the token then names the pod's node. */
export type BoundPod = { readonly name: string; readonly uid: string };

/** A TokenRequest token of an existing ServiceAccount, bound to one of its pods if given. */
export async function serviceAccountToken(
  plane: ControlPlane,
  namespace: string,
  name: string,
  boundPod?: BoundPod,
): Promise<string> {
  const core = plane.kubeConfig().makeApiClient(CoreV1Api);
  const boundObjectRef = boundPod && { apiVersion: "v1", kind: "Pod", ...boundPod };
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600, ...(boundObjectRef && { boundObjectRef }) } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  return token;
}

/**
 * The environment of a process running "in-cluster" as this ServiceAccount (of a pod in its namespace, the bound one
 * if given): the files under CNI_REPAIR_IN_CLUSTER_ROOT, KUBERNETES_SERVICE_HOST/PORT, and an empty HOME.
 */
export async function inClusterAs(
  plane: ControlPlane,
  namespace: string,
  name: string,
  boundPod?: BoundPod,
): Promise<InCluster> {
  const token = await serviceAccountToken(plane, namespace, name, boundPod);
  const root = mkdtempSync(join(tmpdir(), "cni-repair-in-cluster-"));
  const secrets = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
  mkdirSync(secrets, { recursive: true });
  writeFileSync(join(secrets, "token"), token);
  writeFileSync(join(secrets, "ca.crt"), plane.caPem);
  writeFileSync(join(secrets, "namespace"), namespace);
  const home = join(root, "home");
  mkdirSync(home);
  const url = new URL(plane.server);
  return {
    env: {
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      CNI_REPAIR_IN_CLUSTER_ROOT: root,
      // An empty home: no ~/.kube/config may take precedence over the in-cluster identity.
      HOME: home,
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
