// The elector's identity: the pod name (hostname) plus a random suffix, as controller-runtime does.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";

/**
 * Unique per process: a restarted pod keeps its name but must not mistake its predecessor's lease for its own,
 * and hostNetwork pods share the node's hostname. The hostname part tells people which pod leads.
 */
export function electionIdentity(host: string = hostname()): string {
  return `${host}_${randomUUID()}`;
}
