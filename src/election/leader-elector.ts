// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics (tools/leaderelection).
import { ApiError } from "../kube/api-error.js";
import type { Logger } from "../observe/logger.js";
import { type Clock, systemClock, type TimerHandle } from "../util/clock.js";
import { messageOf } from "../util/message-of.js";
import { LeaseClient, type LeaseTransport } from "./lease-client.js";
import {
  claimRecord,
  type Lease,
  type LeaseRecord,
  newLease,
  recordOf,
  releaseRecord,
  withRecord,
} from "./lease-record.js";
import { sleep } from "./sleep.js";
import { DEFAULT_ELECTION_TIMINGS, type ElectionTimings, jittered, validateElectionTimings } from "./timings.js";

export type LeaderElectorOptions = {
  readonly transport: LeaseTransport;
  readonly namespace: string;
  readonly name: string;
  /** Unique per process; see electionIdentity(). */
  readonly identity: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Called on every change, false first on the way out; must not throw (it is logged if it does). */
  readonly onLeadershipChange?: (leading: boolean) => void;
};

/**
 * The lease as last read or written, and when we saw it change (on the monotonic clock): the only clock expiry is
 * judged by. Every duration here is monotonic, as client-go's (Go's time.Now carries a monotonic reading): judged by
 * the wall clock, setting it forward (an NTP step, a VM resumed from a snapshot) would cut a leader's renewal
 * deadline to nothing and make a lease its holder keeps renewing look expired to a follower. The wall clock only
 * stamps the Lease's acquireTime and renewTime.
 */
type Observed = { readonly lease: Lease; readonly record: LeaseRecord; readonly observedAt: number };

/** "held": the lease is ours now; "other": someone else holds a valid lease; "failed": an error. */
type Attempt = "held" | "other" | "failed";

export class LeaderElector {
  readonly identity: string;
  readonly #leases: LeaseClient;
  readonly #timings: ElectionTimings;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #onChange: (leading: boolean) => void;
  readonly #waiters = new Set<() => void>();
  #observed: Observed | undefined;
  #leading = false;
  #terms = 0;
  /** When the last successful write of ours was sent (monotonic): the server wrote it no earlier. */
  #renewedAt = 0;
  #deadline: TimerHandle | undefined;
  /** Aborted when leadership ends, cutting off a renewal still in flight. */
  #term: AbortController | undefined;
  #running = false;
  #lastFailure = "";

  constructor(options: LeaderElectorOptions) {
    this.#timings = {
      leaseDurationMs: options.leaseDurationMs ?? DEFAULT_ELECTION_TIMINGS.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs ?? DEFAULT_ELECTION_TIMINGS.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs ?? DEFAULT_ELECTION_TIMINGS.retryPeriodMs,
    };
    validateElectionTimings(this.#timings);
    if (!options.identity) throw new RangeError("leader election: identity must not be empty");
    if (!options.namespace || !options.name) {
      throw new RangeError("leader election: lease namespace and name are needed");
    }
    this.identity = options.identity;
    this.#leases = new LeaseClient(options.transport, options.namespace, options.name);
    this.#clock = options.clock ?? systemClock;
    this.#onChange = options.onLeadershipChange ?? (() => {});
    this.#log = options.logger.child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
  }

  /**
   * Leading, and renewed within the renew deadline by the monotonic clock, read now: the step-down timer may not
   * have run yet (a process frozen by SIGSTOP, a paused VM or container, a blocked event loop resumes with it
   * overdue), and a lease not renewed in time is no lease. Checked right before every write.
   */
  get isLeader(): boolean {
    return this.#leading && this.#clock.monotonic() - this.#renewedAt < this.#timings.renewDeadlineMs;
  }

  /** Terms begun so far (acquisitions of the Lease by this process). */
  get term(): number {
    return this.#terms;
  }

  /** The holder in the lease as last seen ("" when released), undefined before the first read. */
  get holder(): string | undefined {
    return this.#observed?.record.holderIdentity;
  }

  /** Resolves true once leading (at once if already), false if the signal aborts first. */
  waitForLeadership(signal: AbortSignal): Promise<boolean> {
    if (this.isLeader) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (leading: boolean) => {
        this.#waiters.delete(onLeading);
        signal.removeEventListener("abort", onAbort);
        resolve(leading);
      };
      const onLeading = () => done(true);
      const onAbort = () => done(false);
      this.#waiters.add(onLeading);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Campaigns and renews until the signal aborts; then steps down and, if the lease is ours, releases it so a
   * successor need not wait out the lease duration. Requests in flight are not aborted (an acquire that lands
   * unseen would go unreleased), so this resolves at most one request timeout after the abort.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error("LeaderElector.run is already running");
    this.#running = true;
    this.#log.info("campaigning for the lease", { ...this.#timings });
    try {
      while (!signal.aborted) {
        if (this.#leading) await this.#renewOnce(signal);
        else await this.#acquireOnce(signal);
      }
    } finally {
      const wasLeading = this.#leading;
      this.#stepDown("shutting down");
      await this.#release(wasLeading);
      this.#running = false;
    }
  }

  async #acquireOnce(signal: AbortSignal): Promise<void> {
    const startedAt = this.#clock.monotonic();
    const attempt = await this.#tryAcquireOrRenew(this.#timings.renewDeadlineMs, undefined);
    // An answer slower than the renew deadline is stale on arrival; the next attempt renews it.
    if (attempt === "held" && this.#clock.monotonic() - startedAt < this.#timings.renewDeadlineMs) {
      this.#becomeLeader(startedAt);
      return;
    }
    await sleep(this.#clock, jittered(this.#timings.retryPeriodMs), signal);
  }

  async #renewOnce(signal: AbortSignal): Promise<void> {
    const term = this.#term?.signal;
    if (!term) return;
    await sleep(this.#clock, this.#timings.retryPeriodMs, AbortSignal.any([signal, term]));
    if (signal.aborted || term.aborted) return;
    const startedAt = this.#clock.monotonic();
    const remaining = this.#renewedAt + this.#timings.renewDeadlineMs - startedAt;
    const attempt = await this.#tryAcquireOrRenew(remaining, term);
    // The deadline may have passed while the request was out: then the step-down stands.
    if (term.aborted) return;
    if (attempt === "held") {
      this.#renewedAt = startedAt;
      this.#armDeadline();
      // Past the old deadline before its timer ran, isLeader said no and a worker may be waiting: it leads again.
      this.#wakeWaiters();
    } else if (attempt === "other") {
      this.#stepDown(`the lease is held by ${this.#observed?.record.holderIdentity}`);
    }
  }

  /** client-go's tryAcquireOrRenew: one read-decide-write round. */
  async #tryAcquireOrRenew(timeoutMs: number, signal: AbortSignal | undefined): Promise<Attempt> {
    const call = { timeoutMs, signal };
    try {
      // Fast path: the leader writes over the version it last saw; a 409 means someone wrote since, so re-read.
      const known = this.#observed;
      if (this.#leading && known) {
        try {
          this.#see(await this.#leases.update(withRecord(known.lease, this.#claim(known.record)), call), true);
          return "held";
        } catch (error) {
          if (!isConflict(error)) throw error;
        }
      }
      const current = await this.#leases.get(call);
      if (current === undefined) {
        const lease = newLease(this.#leases.namespace, this.#leases.name, this.#claim(undefined));
        this.#see(await this.#leases.create(lease, call), true);
        return "held";
      }
      const seen = this.#see(current);
      const holder = seen.record.holderIdentity;
      if (holder !== "" && holder !== this.identity && this.#isValid(seen)) return "other";
      this.#see(await this.#leases.update(withRecord(current, this.#claim(seen.record)), call), true);
      return "held";
    } catch (error) {
      this.#failed(error, signal);
      return "failed";
    }
  }

  #claim(old: LeaseRecord | undefined): LeaseRecord {
    return claimRecord(old, this.identity, this.#clock.now(), this.#timings.leaseDurationMs);
  }

  /** Records a read or written lease; the observation time moves only when the record changed. */
  #see(lease: Lease, ownWrite = false): Observed {
    const record = recordOf(lease);
    const previous = this.#observed;
    const changed =
      previous === undefined ||
      previous.lease.metadata.resourceVersion !== lease.metadata.resourceVersion ||
      previous.record.holderIdentity !== record.holderIdentity ||
      previous.record.renewTime !== record.renewTime;
    const observed = { lease, record, observedAt: changed ? this.#clock.monotonic() : previous.observedAt };
    this.#observed = observed;
    const holderChanged = previous?.record.holderIdentity !== record.holderIdentity;
    if (holderChanged && !ownWrite && record.holderIdentity !== this.identity) {
      this.#log.info(record.holderIdentity ? "the lease is held by another" : "the lease is free", {
        holder: record.holderIdentity,
        transitions: record.leaseTransitions,
      });
    }
    return observed;
  }

  /** Valid while the record has not changed for its lease duration, by our clock since we saw it change. */
  #isValid(observed: Observed): boolean {
    const seconds = observed.record.leaseDurationSeconds;
    const durationMs = seconds === undefined ? this.#timings.leaseDurationMs : seconds * 1000;
    return this.#clock.monotonic() < observed.observedAt + durationMs;
  }

  #becomeLeader(renewedAt: number): void {
    this.#leading = true;
    this.#terms++;
    this.#renewedAt = renewedAt;
    this.#term = new AbortController();
    this.#armDeadline();
    this.#lastFailure = "";
    this.#log.info("acquired the lease", { transitions: this.#observed?.record.leaseTransitions });
    this.#notify(true);
    this.#wakeWaiters();
  }

  #wakeWaiters(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  /** Steps down at renewedAt + renewDeadline, before the lease (longer) can expire for anyone else. */
  #armDeadline(): void {
    if (this.#deadline) this.#clock.clearTimeout(this.#deadline);
    const dueIn = this.#renewedAt + this.#timings.renewDeadlineMs - this.#clock.monotonic();
    this.#deadline = this.#clock.setTimeout(() => {
      this.#deadline = undefined;
      this.#stepDown(`no successful renewal within the renew deadline (${this.#timings.renewDeadlineMs}ms)`);
    }, dueIn);
  }

  #stepDown(reason: string): void {
    if (!this.#leading) return;
    this.#leading = false;
    if (this.#deadline) this.#clock.clearTimeout(this.#deadline);
    this.#deadline = undefined;
    this.#term?.abort();
    this.#term = undefined;
    if (reason === "shutting down") this.#log.info("stopped leading", { reason });
    else this.#log.warn("lost the lease", { reason });
    this.#notify(false);
  }

  /** Tried whenever the lease last said us, even after a step-down: the resourceVersion keeps it safe. */
  async #release(wasLeading: boolean): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const known = this.#observed;
      if (known?.record.holderIdentity !== this.identity) return;
      const call = { timeoutMs: this.#timings.renewDeadlineMs };
      try {
        const released = withRecord(known.lease, releaseRecord(known.record, this.#clock.now()));
        this.#see(await this.#leases.update(released, call), true);
        this.#log.info("released the lease");
        return;
      } catch (error) {
        // A late renewal of ours may have landed after we last looked: re-read once and try again.
        if (isConflict(error) && attempt === 0) {
          const current = await this.#leases.get(call).catch(() => undefined);
          if (current) this.#see(current);
          continue;
        }
        // After a step-down, the lease is most likely someone else's by now.
        const level = wasLeading ? "warn" : "debug";
        this.#log.log(level, "could not release the lease; a successor takes over when it expires", {
          error: messageOf(error),
        });
        return;
      }
    }
  }

  #failed(error: unknown, term: AbortSignal | undefined): void {
    if (term?.aborted) return; // cut off at the step-down, which logged already
    const message = messageOf(error);
    if (isConflict(error)) {
      this.#log.debug("lost a race for the lease", { error: message }); // another elector wrote first
    } else if (this.#leading) {
      this.#log.warn("failed to renew the lease", { error: message });
    } else if (message !== this.#lastFailure) {
      this.#log.warn("failed to acquire the lease", { error: message });
    } else {
      this.#log.debug("failed to acquire the lease", { error: message });
    }
    this.#lastFailure = message;
  }

  #notify(leading: boolean): void {
    try {
      this.#onChange(leading);
    } catch (error) {
      this.#log.error("the leadership callback threw", { leading, error: messageOf(error) });
    }
  }
}

function isConflict(error: unknown): boolean {
  return error instanceof ApiError && error.status === 409;
}
