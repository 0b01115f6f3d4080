// Asks the API server who we are (SelfSubjectReview): the startup log line, and the node a pod-bound token names.
import type { KubeTransport } from "./transport.js";

/** The user's extra that names the node of the pod a service-account token is bound to (Kubernetes 1.30+). */
export const NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name";

export type SelfSubject = {
  readonly username: string;
  /** The node a pod-bound service-account token names; undefined for any other credential. */
  readonly nodeName: string | undefined;
};

export async function selfSubject(transport: Pick<KubeTransport, "request">): Promise<SelfSubject> {
  const { body } = await transport.request("create", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
    body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    timeoutMs: 10_000,
  });
  const userInfo = (body as { status?: { userInfo?: { username?: unknown; extra?: Record<string, unknown> } } })?.status
    ?.userInfo;
  const node = userInfo?.extra?.[NODE_NAME_EXTRA];
  return {
    username: typeof userInfo?.username === "string" ? userInfo.username : "(unknown)",
    nodeName: Array.isArray(node) && typeof node[0] === "string" ? node[0] : undefined,
  };
}

export async function whoAmI(transport: KubeTransport): Promise<string> {
  return (await selfSubject(transport)).username;
}
