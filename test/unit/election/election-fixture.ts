// One fake clock, one fake Lease endpoint, captured log lines, and electors run on them until the test ends.
import { Writable } from "node:stream";
import { LeaderElector, type LeaderElectorOptions } from "../../../src/election/leader-elector.js";
import { createLogger, flushLogger } from "../../../src/observe/logger.js";
import { FakeClock } from "../fake-clock.js";
import { FakeLeaseApi, NAME, NAMESPACE } from "./fake-lease-api.js";

export const START = Date.UTC(2026, 0, 1);

export type LogLine = { level: string; msg: string; identity?: string; [key: string]: unknown };

export type Running = {
  readonly elector: LeaderElector;
  /** Every onLeadershipChange call, in order. */
  readonly changes: boolean[];
  readonly stop: AbortController;
  readonly done: Promise<void>;
  readonly finished: () => boolean;
};

export class ElectionFixture {
  readonly clock = new FakeClock(START);
  readonly api = new FakeLeaseApi(this.clock);
  readonly lines: LogLine[] = [];
  readonly logger = createLogger({
    level: "debug",
    format: "json",
    stream: new Writable({
      write: (chunk, _encoding, done) => {
        for (const line of String(chunk).split("\n")) if (line) this.lines.push(JSON.parse(line) as LogLine);
        done();
      },
    }),
  });
  readonly #running: Running[] = [];

  elector(identity: string, options: Partial<LeaderElectorOptions> = {}, changes: boolean[] = []): LeaderElector {
    return new LeaderElector({
      transport: this.api,
      namespace: NAMESPACE,
      name: NAME,
      identity,
      logger: this.logger,
      clock: this.clock,
      onLeadershipChange: (leading) => changes.push(leading),
      ...options,
    });
  }

  /** Starts run() and lets its first attempt finish. */
  async start(identity: string, options: Partial<LeaderElectorOptions> = {}): Promise<Running> {
    const changes: boolean[] = [];
    const elector = this.elector(identity, options, changes);
    const stop = new AbortController();
    let finished = false;
    const done = elector.run(stop.signal).then(() => {
      finished = true;
    });
    const running: Running = { elector, changes, stop, done, finished: () => finished };
    this.#running.push(running);
    await this.clock.advanceAsync(0);
    return running;
  }

  /** Aborts one elector and moves fake time until its run() resolves. */
  async stop(running: Running): Promise<void> {
    running.stop.abort();
    for (let i = 0; i < 100 && !running.finished(); i++) await this.clock.advanceAsync(1000);
    await running.done;
  }

  /** Moves time in steps, calling check after each. */
  async advance(ms: number, stepMs = 100, check: () => void = () => {}): Promise<void> {
    for (let elapsed = 0; elapsed < ms; elapsed += stepMs) {
      await this.clock.advanceAsync(Math.min(stepMs, ms - elapsed));
      check();
    }
  }

  async logs(): Promise<LogLine[]> {
    await flushLogger(this.logger);
    return this.lines;
  }

  async close(): Promise<void> {
    this.api.mode = "ok";
    for (const running of this.#running) await this.stop(running);
    this.logger.close();
  }
}
