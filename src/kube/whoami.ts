// Asks the API server who we are (SelfSubjectReview), for the startup log line.
import type { KubeTransport } from "./transport.js";

export async function whoAmI(transport: KubeTransport): Promise<string> {
  const { body } = await transport.request("create", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
    body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    timeoutMs: 10_000,
  });
  const username = (body as { status?: { userInfo?: { username?: unknown } } } | undefined)?.status?.userInfo?.username;
  return typeof username === "string" ? username : "(unknown)";
}
