// Service-account tokens signed by the test API server's own key, with any expiry: what a TokenRequest would
// return, but also already expired (a TokenRequest refuses that).
import { sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { CoreV1Api } from "@kubernetes/client-node";
import type { ControlPlane } from "./control-plane.js";

/** Must match the API server's --service-account-issuer (its audience defaults to it too). */
const ISSUER = "https://kubernetes.default.svc.cluster.local";

const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");

/** An RS256 JWT for an existing ServiceAccount, valid from an hour before `expiresAt` until then. */
export async function serviceAccountJwt(
  plane: ControlPlane,
  account: { namespace: string; name: string },
  expiresAt: Date,
): Promise<string> {
  const core = plane.kubeConfig().makeApiClient(CoreV1Api);
  const found = await core.readNamespacedServiceAccount(account);
  const uid = found.metadata?.uid;
  if (!uid) throw new Error(`ServiceAccount ${account.namespace}/${account.name} has no uid`);
  const exp = Math.floor(expiresAt.getTime() / 1000);
  const claims = {
    iss: ISSUER,
    aud: [ISSUER],
    sub: `system:serviceaccount:${account.namespace}:${account.name}`,
    iat: exp - 3600,
    nbf: exp - 3600,
    exp,
    "kubernetes.io": { namespace: account.namespace, serviceaccount: { name: account.name, uid } },
  };
  const unsigned = `${part({ alg: "RS256", typ: "JWT" })}.${part(claims)}`;
  const signature = sign("RSA-SHA256", Buffer.from(unsigned), readFileSync(plane.serviceAccountKeyFile));
  return `${unsigned}.${signature.toString("base64url")}`;
}
