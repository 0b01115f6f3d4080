// Writes events.k8s.io/v1 Events about pods and nodes, the way `kubectl describe` shows them.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { METADATA_ONLY } from "./metadata-only.js";
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

/** What an Event is about: a pod, or a cluster-scoped object such as a Node (its Events go to "default"). */
export type EventSubject = {
  readonly kind: "Pod" | "Node";
  readonly namespace?: string;
  readonly name: string;
  readonly uid: string;
};

export async function createPodEvent(transport: KubeTransport, event: PodEvent, now = new Date()): Promise<void> {
  await createEvent(transport, { kind: "Pod", ...event.pod }, event, now);
}

export async function createEvent(
  transport: KubeTransport,
  subject: EventSubject,
  event: Omit<PodEvent, "pod">,
  now = new Date(),
): Promise<void> {
  const { name, uid } = subject;
  const namespace = subject.namespace ?? "default";
  await transport.requestBytes(
    "create",
    "POST",
    `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`,
    {
      accept: METADATA_ONLY,
      body: {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        // client-go's naming: the pod name plus a unique hex suffix (generateName would need a trailing "-").
        metadata: { name: `${name}.${uniqueSuffix()}`, namespace },
        // eventTime needs microsecond precision in RFC 3339.
        eventTime: now.toISOString().replace(/Z$/, "000Z"),
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: reportingInstance(),
        action: event.action,
        reason: event.reason,
        type: event.type,
        note: event.note.slice(0, 1024),
        regarding: {
          apiVersion: "v1",
          kind: subject.kind,
          ...(subject.namespace !== undefined && { namespace: subject.namespace }),
          name,
          uid,
        },
      },
    },
  );
}

/** Read once: os.hostname() is a system call, and the pod's name does not change while it runs. */
let instance: string | undefined;
const reportingInstance = (): string => {
  instance ??= `${REPORTING_CONTROLLER}-${hostname()}`.slice(0, 128);
  return instance;
};

// Random once per process, not per Event (a draw was ~5% of an Event's CPU); the counter tells this process's apart.
const processTag = randomBytes(3).toString("hex");
let written = 0;

/** The time, this process's tag, a counter: unique in the process; across processes, but for 1 in 2^24 in one ms. */
const uniqueSuffix = (): string => {
  written = (written + 1) % 0x100000;
  return `${Date.now().toString(16)}${processTag}${written.toString(16)}`;
};
