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
  let text: string;
  try {
    text = readFileSync(auditLogPath, "utf8");
  } catch {
    return [];
  }
  const events: AuditEvent[] = [];
  for (const line of text.split("\n")) {
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
