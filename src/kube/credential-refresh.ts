// Fresh credentials for the transport: one authenticate() at a time, shared by every request that needs them, and
// no request waits on it for ever.
//
// An exec plugin (EKS, GKE, OIDC helpers) is a process per call, and client-node caches its token only once one
// call has answered: a start's first requests, sent together, would each run the plugin. A plugin that never
// answers would hold every request, a watch's restart and a shutdown too, without a word; and a new call per
// request would leave one stuck plugin process per retry. So a call in flight is joined, not repeated, even after
// its waiters gave up, and each waiter gives up after `deadlineMs` with an error that names the credentials.
import type { Authentication, ClusterCredentials } from "./cluster-credentials.js";

/** The credentials could not be had: the plugin failed, could not be run, or did not answer in time. */
export class CredentialsError extends Error {
  readonly code = "ERR_CREDENTIALS";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CredentialsError";
  }
}

export class CredentialRefresh {
  readonly #deadlineMs: number;
  /** The call in flight, and whose: credentials reloaded after a 401 do not join a call to the ones they replace. */
  #inFlight: { readonly credentials: ClusterCredentials; readonly call: Promise<Authentication> } | undefined;

  constructor(deadlineMs: number) {
    this.#deadlineMs = deadlineMs;
  }

  /**
   * The credentials' current headers and TLS: joins the call in flight, or starts one. Rejects with a
   * CredentialsError when it fails or has not answered within the deadline, or with the signal's reason once the
   * caller aborts; the call itself goes on, and the next caller joins it.
   */
  async authenticate(credentials: ClusterCredentials, signal?: AbortSignal): Promise<Authentication> {
    signal?.throwIfAborted();
    const call = this.#inFlight?.credentials === credentials ? this.#inFlight.call : this.#start(credentials);
    const { promise: givenUp, reject } = Promise.withResolvers<never>();
    const deadline = setTimeout(() => {
      const who = credentials.describe().user;
      reject(
        new CredentialsError(`no credentials for ${who} within ${this.#deadlineMs / 1000} s: still waiting on it`),
      );
    }, this.#deadlineMs);
    deadline.unref();
    const onAbort = () => reject(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      return await Promise.race([call, givenUp]);
    } catch (error) {
      if (error instanceof CredentialsError || signal?.aborted) throw error;
      throw new CredentialsError(`cannot get credentials for ${credentials.describe().user}: ${failureOf(error)}`, {
        cause: error,
      });
    } finally {
      clearTimeout(deadline);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  #start(credentials: ClusterCredentials): Promise<Authentication> {
    const call = credentials.authenticate();
    this.#inFlight = { credentials, call };
    // Settled (either way) is done: the next caller starts afresh. Also handles a rejection no waiter is left for.
    const done = () => {
      if (this.#inFlight?.call === call) this.#inFlight = undefined;
    };
    call.then(done, done);
    return call;
  }
}

/** client-node rejects a failed plugin with its stderr as the message, which may be empty. */
function failureOf(error: unknown): string {
  const message = error instanceof Error ? error.message.trim() : String(error);
  return message === "" ? "it failed and said nothing on stderr" : message;
}
