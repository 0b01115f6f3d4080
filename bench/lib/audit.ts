// Reads the API server's audit log (victim pod writes only) and pairs each break with the repair DELETE.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { BREAK_USER_AGENT, victimKey } from "./victims.js";

type AuditLine = {
  readonly verb: string;
  readonly userAgent?: string;
  readonly objectRef?: { readonly namespace?: string; readonly name?: string; readonly subresource?: string };
  readonly responseStatus?: { readonly code?: number };
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp: string;
};

/** When the server finished a write, in milliseconds with the log's microsecond precision. */
export function auditTimeMs(timestamp: string): number {
  const match = /^(.{19})(?:\.(\d+))?Z$/.exec(timestamp);
  if (!match) return Number.NaN;
  return Date.parse(`${match[1]}Z`) + Number(`0.${match[2] ?? "0"}`) * 1000;
}

/** Returns audit entries appended since the previous call (starting at the file's size when created). */
export class AuditTail {
  readonly #path: string;
  #offset: number;

  constructor(path: string) {
    this.#path = path;
    this.#offset = sizeOf(path);
  }

  read(): AuditLine[] {
    const end = sizeOf(this.#path);
    if (end <= this.#offset) return [];
    const buffer = Buffer.alloc(end - this.#offset);
    const fd = openSync(this.#path, "r");
    try {
      readSync(fd, buffer, 0, buffer.length, this.#offset);
    } finally {
      closeSync(fd);
    }
    const text = buffer.toString("utf8");
    const complete = text.lastIndexOf("\n") + 1;
    this.#offset += Buffer.byteLength(text.slice(0, complete));
    return text
      .slice(0, complete)
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as AuditLine);
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export type RepairTiming = {
  readonly key: string;
  /** The broken-status write arrived (a busy server can emit its watch event before it answers). */
  readonly brokenReceivedMs: number;
  /** The broken-status write was answered: "accepted". */
  readonly brokenAtMs: number;
  readonly deletedAtMs: number | undefined;
  /**
   * When the server received that DELETE: break answered → this is the controller's part (the watch event's
   * delivery, its own work, its request's write); this → deletedAtMs is the server's own DELETE.
   */
  readonly deleteReceivedMs: number | undefined;
};

const ok = (line: AuditLine) => (line.responseStatus?.code ?? 0) >= 200 && (line.responseStatus?.code ?? 0) < 300;

/**
 * Per victim: when the server accepted the status write that broke it, and when it accepted the first DELETE
 * from a controller (the bench's own clients, whose user agents start with "bench-", are not controllers).
 */
export function repairTimings(lines: readonly AuditLine[], keys: readonly string[]): RepairTiming[] {
  const broken = new Map<string, [received: number, answered: number]>();
  const deleted = new Map<string, [received: number, answered: number]>();
  for (const line of lines) {
    if (!ok(line) || !line.objectRef?.namespace || !line.objectRef.name) continue;
    const key = victimKey({ namespace: line.objectRef.namespace, name: line.objectRef.name });
    const at = auditTimeMs(line.stageTimestamp);
    const agent = line.userAgent ?? "";
    if (line.verb === "patch" && line.objectRef.subresource === "status" && agent === BREAK_USER_AGENT) {
      if (!broken.has(key)) broken.set(key, [auditTimeMs(line.requestReceivedTimestamp), at]);
    } else if (line.verb === "delete" && !agent.startsWith("bench-") && !deleted.has(key)) {
      deleted.set(key, [auditTimeMs(line.requestReceivedTimestamp), at]);
    }
  }
  return keys.flatMap((key) => {
    const times = broken.get(key);
    const deletion = deleted.get(key);
    return times === undefined
      ? []
      : [
          {
            key,
            brokenReceivedMs: times[0],
            brokenAtMs: times[1],
            deletedAtMs: deletion?.[1],
            deleteReceivedMs: deletion?.[0],
          },
        ];
  });
}

/**
 * DELETE requests a controller sent for these pods, whatever the answer: a controller that deletes a pod again
 * while it is already going (404 once it is gone, or a second 200) is counted for each request.
 */
export function controllerDeleteRequests(lines: readonly AuditLine[], keys: readonly string[]): number {
  const wanted = new Set(keys);
  return lines.filter(
    (line) =>
      line.verb === "delete" &&
      !(line.userAgent ?? "").startsWith("bench-") &&
      line.objectRef?.namespace !== undefined &&
      line.objectRef.name !== undefined &&
      wanted.has(victimKey({ namespace: line.objectRef.namespace, name: line.objectRef.name })),
  ).length;
}

/** Pods among `keys` that a controller's DELETE succeeded on more than once (deleted again while already going). */
export function deletedTwice(lines: readonly AuditLine[], keys: readonly string[]): number {
  const wanted = new Set(keys);
  const successes = new Map<string, number>();
  for (const line of lines) {
    if (line.verb !== "delete" || !ok(line) || (line.userAgent ?? "").startsWith("bench-")) continue;
    if (!line.objectRef?.namespace || !line.objectRef.name) continue;
    const key = victimKey({ namespace: line.objectRef.namespace, name: line.objectRef.name });
    if (wanted.has(key)) successes.set(key, (successes.get(key) ?? 0) + 1);
  }
  return [...successes.values()].filter((count) => count > 1).length;
}

/**
 * Per pod among `keys`: from a controller's first successful DELETE until the fake kubelet's DELETE finished it
 * (`finisherAgent`), both as the server received them. A pod deleted at once (no finishing seen) is in flight for
 * no time. The controller counts a pod from before it sends its DELETE until its watch shows the pod gone, which
 * is after the server received the kubelet's DELETE (a busy server can send that watch event before it logs its
 * answer, so the answer's time would not do): this window lies within the controller's, and the most in flight
 * here can only be at or under what it counted against its caps.
 */
export function deletionWindows(
  lines: readonly AuditLine[],
  keys: readonly string[],
  finisherAgent: string,
): Map<string, readonly [from: number, to: number]> {
  const wanted = new Set(keys);
  const from = new Map<string, number>();
  const to = new Map<string, number>();
  for (const line of lines) {
    if (line.verb !== "delete" || !ok(line) || !line.objectRef?.namespace || !line.objectRef.name) continue;
    const key = victimKey({ namespace: line.objectRef.namespace, name: line.objectRef.name });
    if (!wanted.has(key)) continue;
    const at = auditTimeMs(line.requestReceivedTimestamp);
    const agent = line.userAgent ?? "";
    if (agent === finisherAgent) to.set(key, at);
    else if (!agent.startsWith("bench-") && !from.has(key)) from.set(key, at);
  }
  return new Map([...from].map(([key, start]) => [key, [start, Math.max(start, to.get(key) ?? start)] as const]));
}

/** The most windows open at one moment within any one group (windows that only touch do not overlap). */
export function maxInFlight(
  windows: ReadonlyMap<string, readonly [from: number, to: number]>,
  groupOf: (key: string) => string,
): number {
  const edges = new Map<string, [at: number, step: number][]>();
  for (const [key, [from, to]] of windows) {
    if (to <= from) continue;
    const group = edges.get(groupOf(key)) ?? [];
    group.push([from, 1], [to, -1]);
    edges.set(groupOf(key), group);
  }
  let most = 0;
  for (const group of edges.values()) {
    let open = 0;
    for (const [, step] of group.sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
      open += step;
      most = Math.max(most, open);
    }
  }
  return most;
}
