// The coordination.k8s.io/v1 Lease as JSON, and the leader-election record its spec carries.

export type LeaseSpec = {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
};

/** A Lease as the API server returns it; other fields ride along untouched into the next PUT. */
export type Lease = {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; namespace?: string; resourceVersion?: string; [key: string]: unknown };
  spec?: LeaseSpec;
  [key: string]: unknown;
};

/** client-go's LeaderElectionRecord. An empty holder means nobody holds the lease. */
export type LeaseRecord = {
  readonly holderIdentity: string;
  /** Undefined when the lease does not say (then our own lease duration applies). */
  readonly leaseDurationSeconds: number | undefined;
  readonly acquireTime: string | undefined;
  readonly renewTime: string | undefined;
  readonly leaseTransitions: number;
};

export function recordOf(lease: Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  const seconds = spec.leaseDurationSeconds;
  return {
    holderIdentity: typeof spec.holderIdentity === "string" ? spec.holderIdentity : "",
    leaseDurationSeconds: typeof seconds === "number" && seconds > 0 ? seconds : undefined,
    acquireTime: typeof spec.acquireTime === "string" ? spec.acquireTime : undefined,
    renewTime: typeof spec.renewTime === "string" ? spec.renewTime : undefined,
    leaseTransitions: typeof spec.leaseTransitions === "number" ? spec.leaseTransitions : 0,
  };
}

export function specOf(record: LeaseRecord): LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    ...(record.leaseDurationSeconds !== undefined && { leaseDurationSeconds: record.leaseDurationSeconds }),
    ...(record.acquireTime !== undefined && { acquireTime: record.acquireTime }),
    ...(record.renewTime !== undefined && { renewTime: record.renewTime }),
    leaseTransitions: record.leaseTransitions,
  };
}

/** The same lease with a new record in its spec (metadata, resourceVersion included, kept). */
export function withRecord(lease: Lease, record: LeaseRecord): Lease {
  return { ...lease, spec: { ...lease.spec, ...specOf(record) } };
}

export function newLease(namespace: string, name: string, record: LeaseRecord): Lease {
  return { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { namespace, name }, spec: specOf(record) };
}

/** What a candidate writes (client-go): renewing keeps acquireTime and the count; taking over counts one more. */
export function claimRecord(
  old: LeaseRecord | undefined,
  identity: string,
  nowMs: number,
  leaseDurationMs: number,
): LeaseRecord {
  const now = microTime(nowMs);
  const ours = old?.holderIdentity === identity;
  return {
    holderIdentity: identity,
    leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
    acquireTime: ours ? (old.acquireTime ?? now) : now,
    renewTime: now,
    leaseTransitions: old === undefined ? 0 : ours ? old.leaseTransitions : old.leaseTransitions + 1,
  };
}

/** client-go's release: nobody holds it, and a 1 s duration, so a successor takes it at its next retry. */
export function releaseRecord(old: LeaseRecord, nowMs: number): LeaseRecord {
  const now = microTime(nowMs);
  return {
    holderIdentity: "",
    leaseDurationSeconds: 1,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: old.leaseTransitions,
  };
}

/** A MicroTime: the API server parses exactly six fractional digits, so toISOString's three are padded. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
