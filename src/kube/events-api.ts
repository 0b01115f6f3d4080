// Writes events.k8s.io/v1 Events about pods, the way `kubectl describe pod` shows them.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { KubeTransport } from "./transport.js";

export const REPORTING_CONTROLLER = "cni-repair";

export type PodEvent = {
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly type: "Normal" | "Warning";
  /** CamelCase machine reason, e.g. BrokenPodDeleted. */
  readonly reason: string;
  /** What was done, e.g. Delete, Label, Report. */
  readonly action: string;
  readonly note: string;
};

export async function createPodEvent(transport: KubeTransport, event: PodEvent, now = new Date()): Promise<void> {
  const { namespace, name, uid } = event.pod;
  await transport.request(
    "create",
    "POST",
    `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`,
    {
      body: {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        // client-go's naming: the pod name plus a unique hex suffix (generateName would need a trailing "-").
        metadata: { name: `${name}.${uniqueSuffix()}`, namespace },
        // eventTime needs microsecond precision in RFC 3339.
        eventTime: now.toISOString().replace(/Z$/, "000Z"),
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: `${REPORTING_CONTROLLER}-${hostname()}`.slice(0, 128),
        action: event.action,
        reason: event.reason,
        type: event.type,
        note: event.note.slice(0, 1024),
        regarding: { apiVersion: "v1", kind: "Pod", namespace, name, uid },
      },
    },
  );
}

const uniqueSuffix = (): string => `${Date.now().toString(16)}${randomBytes(3).toString("hex")}`;
