// Reads the API server's audit log: the ground truth of which requests reached it.
import { readFileSync } from "node:fs";

export type AuditEvent = {
  readonly stage: string;
  readonly verb: string;
  readonly userAgent?: string;
  readonly user?: { readonly username?: string };
  readonly objectRef?: {
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
  readonly requestObject?: Record<string, unknown>;
  readonly responseStatus?: { readonly code?: number };
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp: string;
  readonly requestURI: string;
};

/** Completed requests on pods in one namespace, in the order the server logged them. */
export function podRequests(auditLogPath: string, namespace: string): AuditEvent[] {
  const events: AuditEvent[] = [];
  for (const line of auditLines(auditLogPath)) {
    if (!line.includes(`"namespace":"${namespace}"`)) continue;
    const event = JSON.parse(line) as AuditEvent;
    if (event.stage === "ResponseComplete" && event.objectRef?.resource === "pods") events.push(event);
  }
  return events;
}

/** DELETEs of pods sent by cni-repair (recognised by its user agent). */
export function controllerDeletes(auditLogPath: string, namespace: string): AuditEvent[] {
  return podRequests(auditLogPath, namespace).filter(
    (event) => event.verb === "delete" && (event.userAgent ?? "").startsWith("cni-repair/"),
  );
}

/** Completed writes (create, update, patch, delete) of the named Node, in the order the server logged them. */
export function nodeWrites(auditLogPath: string, node: string): AuditEvent[] {
  const events: AuditEvent[] = [];
  for (const line of auditLines(auditLogPath)) {
    if (!line.includes(`"name":"${node}"`)) continue;
    const event = JSON.parse(line) as AuditEvent;
    const { resource, subresource, name } = event.objectRef ?? {};
    if (event.stage !== "ResponseComplete" || resource !== "nodes" || subresource || name !== node) continue;
    if (["create", "update", "patch", "delete"].includes(event.verb)) events.push(event);
  }
  return events;
}

/** The log's lines; none while it does not exist yet. */
function auditLines(auditLogPath: string): string[] {
  try {
    return readFileSync(auditLogPath, "utf8").split("\n");
  } catch {
    return [];
  }
}

/**
 * When the server received the request, in ms with the log's microseconds kept. A write commits after this moment,
 * so whatever a watcher did in reaction to it was received later still. The ResponseComplete stageTimestamp is no
 * such bound: the response can be written after watchers have already acted on the commit (a scheduler's binding
 * of a pod to a just-untainted node was logged complete 1 ms before the untainting PATCH was).
 */
export function receivedAtMs(event: AuditEvent): number {
  return auditMicros(event.requestReceivedTimestamp) / 1_000;
}

/** An audit timestamp in microseconds (Date.parse keeps only milliseconds, ties would blur). */
export function auditMicros(timestamp: string): number {
  const [, whole = timestamp, fraction = ""] = /^(.*?)(?:\.(\d+))?Z$/.exec(timestamp) ?? [];
  return Date.parse(`${whole}Z`) * 1_000 + Number(fraction.padEnd(6, "0").slice(0, 6));
}

/**
 * Pods of the namespace bound to a node by the scheduler (pods/binding creates that succeeded), each at the moment
 * its binding was received (see receivedAtMs).
 */
export function podBindings(
  auditLogPath: string,
  namespace: string,
): { readonly pod: string; readonly node: string; readonly atMs: number }[] {
  return podRequests(auditLogPath, namespace).flatMap((event) => {
    if (event.objectRef?.subresource !== "binding" || event.verb !== "create") return [];
    if ((event.responseStatus?.code ?? 0) >= 300) return [];
    const target = (event.requestObject as { target?: { name?: unknown } } | undefined)?.target;
    if (typeof target?.name !== "string") return [];
    return [{ pod: event.objectRef.name ?? "", node: target.name, atMs: receivedAtMs(event) }];
  });
}
