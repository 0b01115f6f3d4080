// SIGTERM and SIGINT, listened for from the start of `run`: a stop that comes while the start-up checks still wait on
// the API server (or on an exec plugin, up to a request's timeout each) is a stop like any other, ending the process
// with exit 0 and its last log lines, not by the signal's default action (exit 143, nothing logged).

/** What a start-up step resolved to when a stop came first: its own outcome is then ignored. */
export const STOPPED: unique symbol = Symbol("stopped");

export type StopSignal = {
  /** The first SIGTERM or SIGINT. */
  readonly received: Promise<NodeJS.Signals>;
  /** The signal once received. */
  readonly signal: NodeJS.Signals | undefined;
  /** The step's outcome, or STOPPED if a stop came before it settled (a later rejection of it is dropped). */
  unless<T>(step: Promise<T>): Promise<T | typeof STOPPED>;
};

/**
 * Listens now. One signal each: a second SIGTERM during the shutdown has Node's default action, the way to end a
 * shutdown that hangs.
 */
export function listenForStop(target: Pick<NodeJS.Process, "once"> = process): StopSignal {
  let signal: NodeJS.Signals | undefined;
  const received = new Promise<NodeJS.Signals>((resolve) => {
    const stop = (name: NodeJS.Signals) => {
      signal ??= name;
      resolve(signal);
    };
    target.once("SIGTERM", () => stop("SIGTERM"));
    target.once("SIGINT", () => stop("SIGINT"));
  });
  return {
    received,
    get signal() {
      return signal;
    },
    async unless<T>(step: Promise<T>): Promise<T | typeof STOPPED> {
      if (signal !== undefined) {
        step.catch(() => {});
        return STOPPED;
      }
      const stopped = received.then((): typeof STOPPED => STOPPED);
      const outcome = await Promise.race([step, stopped]);
      if (outcome === STOPPED) step.catch(() => {});
      return outcome;
    },
  };
}
