// Declares a watch dead when no byte came for a while: the watch and the streamed list both arm it at the dial
// and at every chunk, and abort their request through its signal.

export class StallWatchdog {
  readonly #stop = new AbortController();
  readonly #timeoutMs: number;
  #timer: NodeJS.Timeout | undefined;
  #stalled = false;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /** Aborts when the watchdog fires or is disposed. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** True once it fired: the abort was a stall, not the caller's. */
  get stalled(): boolean {
    return this.#stalled;
  }

  /** (Re)starts the countdown: call at the dial and whenever a byte arrives. */
  arm(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#stalled = true;
      this.#stop.abort();
    }, this.#timeoutMs);
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#stop.abort();
  }
}
