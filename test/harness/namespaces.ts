// A fresh namespace per test, so tests never see each other's pods.
import { randomBytes } from "node:crypto";
import type { CoreV1Api } from "@kubernetes/client-node";

export async function createTestNamespace(api: CoreV1Api, prefix = "t"): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString("hex")}`;
  await api.createNamespace({ body: { metadata: { name, labels: { "cni-repair.test/owned": "true" } } } });
  return name;
}
