// A finished command's process ends even if something it started lingers (an exec plugin that never answered keeps
// its pipes open), as nothing outlives a Go main's return; but only once what it wrote has left: stdout to a pipe is
// asynchronous, and `scan -o json | less` may read its output long after the command is done.

/** How long a finished command's process may take to end by itself before it is ended. */
export const LINGER_AFTER_FINISH_MS = 2_000;

/** What is asked of stdout and stderr. */
type Output = { readonly writableLength: number; once(event: "drain", listener: () => void): unknown };

/**
 * Once `streams` have nothing left to write, calls `exit` after `lingerMs` unless the process has ended by itself
 * (the timer keeps nothing alive). A stream that never drains (its reader stopped reading) leaves the process as
 * Node would leave it.
 */
export function exitWhenDrained(
  exit: () => void = () => process.exit(),
  streams: readonly Output[] = [process.stdout, process.stderr],
  lingerMs: number = LINGER_AFTER_FINISH_MS,
): void {
  const busy = streams.find((stream) => stream.writableLength > 0);
  if (busy) {
    busy.once("drain", () => exitWhenDrained(exit, streams, lingerMs));
    return;
  }
  setTimeout(exit, lingerMs).unref();
}
