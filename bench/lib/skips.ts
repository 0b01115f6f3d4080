// The scenarios a run leaves out. Each is said where a reader looks: the progress log as it happens, again at the
// end, and on GitHub Actions as a warning annotation. A smoke run proves the scenarios work, so it fails on any that
// could not run; one left out on purpose (BENCH_ISTIO_REPAIR=off) is said the same way but does not fail it.

export type Skip = { readonly what: string; readonly why: string; readonly asked: boolean };

export class Skips {
  readonly #skips: Skip[] = [];
  readonly #say: (line: string) => void;
  readonly #env: NodeJS.ProcessEnv;
  readonly #print: (line: string) => void;

  /** `say`: the progress log; `print`: stdout, where GitHub Actions reads workflow commands. */
  constructor(say: (line: string) => void, env: NodeJS.ProcessEnv = process.env, print = console.log) {
    this.#say = say;
    this.#env = env;
    this.#print = print;
  }

  /** `asked`: the run's settings left it out; otherwise it could not run (a smoke run then fails). */
  skip(what: string, why: string, asked: boolean): void {
    const skip = { what, why, asked };
    this.#skips.push(skip);
    this.#say(lineOf(skip));
    // Shown on the workflow run's summary page, not only deep in the log.
    if (this.#env.GITHUB_ACTIONS === "true") this.#print(`::warning title=bench skipped a scenario::${what}: ${why}`);
  }

  get all(): readonly Skip[] {
    return this.#skips;
  }

  /** The scenarios that could not run although the run asked for them. */
  get unasked(): readonly Skip[] {
    return this.#skips.filter((skip) => !skip.asked);
  }
}

export const lineOf = (skip: Skip): string =>
  `SKIPPED ${skip.what}: ${skip.why}${skip.asked ? "" : " (not asked for: a smoke run fails)"}`;
