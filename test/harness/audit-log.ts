// Reads the API server's audit log: the ground truth of which requests reached it.
import { closeSync, openSync, readSync, type Stats, statSync } from "node:fs";
import { waitFor } from "./wait.js";

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

/**
 * cni-repair's DELETEs once at least `count` are logged. The server logs a request after it has answered it, so a
 * read made as soon as the answer came (or the pod showed its deletion) can miss it; full CI runs did.
 */
export async function loggedControllerDeletes(
  auditLogPath: string,
  namespace: string,
  count: number,
): Promise<AuditEvent[]> {
  await waitFor(
    `${count} DELETE(s) by cni-repair in the audit log`,
    () => controllerDeletes(auditLogPath, namespace).length >= count,
  );
  return controllerDeletes(auditLogPath, namespace);
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

/**
 * The log's lines so far; none while it does not exist yet. Read incrementally: tests poll the run's shared log
 * every few hundred ms, so each call reads only the bytes added since the last one. A log that shrank or was
 * replaced (a new control plane in the same place) is read again from its start.
 */
export function auditLines(auditLogPath: string): readonly string[] {
  let stats: Stats;
  try {
    stats = statSync(auditLogPath);
  } catch {
    readers.delete(auditLogPath);
    return [];
  }
  let reader = readers.get(auditLogPath);
  if (!reader || reader.inode !== stats.ino || stats.size < reader.offset) {
    reader = { inode: stats.ino, offset: 0, lines: [], partial: Buffer.alloc(0) };
    readers.set(auditLogPath, reader);
  }
  if (stats.size > reader.offset) readAppended(auditLogPath, reader, stats.size);
  return reader.lines;
}

/** Drops what was read of a log (its control plane is gone). */
export function forgetAuditLog(auditLogPath: string): void {
  readers.delete(auditLogPath);
}

type AuditReader = { inode: number; offset: number; readonly lines: string[]; partial: Buffer };

const readers = new Map<string, AuditReader>();

function readAppended(auditLogPath: string, reader: AuditReader, size: number): void {
  const fresh = Buffer.alloc(size - reader.offset);
  const fd = openSync(auditLogPath, "r");
  let read = 0;
  try {
    while (read < fresh.length) {
      const got = readSync(fd, fresh, read, fresh.length - read, reader.offset + read);
      if (got === 0) break;
      read += got;
    }
  } finally {
    closeSync(fd);
  }
  reader.offset += read;
  // Split on the newline byte: a line cut mid-way (a multi-byte character too) waits for its end.
  const bytes = Buffer.concat([reader.partial, fresh.subarray(0, read)]);
  let start = 0;
  for (let newline = bytes.indexOf(10); newline !== -1; newline = bytes.indexOf(10, start)) {
    if (newline > start) reader.lines.push(bytes.toString("utf8", start, newline));
    start = newline + 1;
  }
  reader.partial = Buffer.from(bytes.subarray(start));
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
