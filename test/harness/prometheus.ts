// A throw-away Prometheus (Debian's `prometheus` package) on a loopback port, scraping given targets.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManagedProcess } from "./managed-process.js";
import { destroyOnExit, ownedTempDir } from "./owned-dirs.js";
import { freePort } from "./ports.js";
import { waitFor } from "./wait.js";

export type ScrapeTarget = {
  /** host:port serving /metrics. */
  readonly address: string;
  /** Labels the target gets, as a ServiceMonitor would add them (namespace, pod, …). */
  readonly labels?: Record<string, string>;
};

export type PrometheusOptions = {
  readonly job: string;
  readonly targets: readonly ScrapeTarget[];
  /** Rule files Prometheus loads and evaluates. */
  readonly ruleFiles?: readonly string[];
  readonly intervalSeconds?: number;
};

/** A sample vector or scalar as the HTTP API returns it. */
export type QueryResult =
  | { readonly resultType: "vector"; readonly result: { metric: Record<string, string>; value: [number, string] }[] }
  | { readonly resultType: "scalar" | "string"; readonly result: [number, string] }
  | { readonly resultType: "matrix"; readonly result: { metric: Record<string, string>; values: unknown[] }[] };

/** A rule as Prometheus' rules API reports it. */
export type LoadedRule = {
  readonly name: string;
  readonly query: string;
  readonly labels?: Record<string, string>;
  readonly health: string;
  readonly lastError?: string;
  readonly type: string;
};

/** Where a query failed: Prometheus' own error type and message (bad_data for a parse error). */
export class QueryError extends Error {
  readonly errorType: string;
  constructor(query: string, errorType: string, message: string) {
    super(`${errorType}: ${message} (query: ${query})`);
    this.name = "QueryError";
    this.errorType = errorType;
  }
}

/** Fails with a clear message when the binaries are missing: `make prometheus` installs them. */
export function requirePrometheusBinaries(): { prometheus: string; promtool: string } {
  const find = (name: string): string => {
    try {
      return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
    } catch {
      throw new Error(`${name} is not installed: run \`make prometheus\` (Debian package "prometheus")`);
    }
  };
  return { prometheus: find("prometheus"), promtool: find("promtool") };
}

const DIR_PREFIX = "cni-repair-prometheus-";

export class Prometheus {
  readonly dir: string;
  readonly url: string;
  readonly #process: ManagedProcess;
  /** Kills the server and removes the directory if the process exits before stop(). */
  readonly #exitGuard = destroyOnExit(this);

  private constructor(dir: string, url: string, child: ManagedProcess) {
    this.dir = dir;
    this.url = url;
    this.#process = child;
  }

  /** Writes the configuration, starts the server and waits until it is ready. Cleans up if it cannot start. */
  static async start(options: PrometheusOptions): Promise<Prometheus> {
    const { prometheus } = requirePrometheusBinaries();
    const dir = ownedTempDir(DIR_PREFIX);
    const interval = `${options.intervalSeconds ?? 1}s`;
    // JSON is YAML, so no YAML library is needed.
    const config = {
      global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
      rule_files: options.ruleFiles ?? [],
      scrape_configs: [
        {
          job_name: options.job,
          static_configs: options.targets.map((target) => ({
            targets: [target.address],
            labels: target.labels ?? {},
          })),
        },
      ],
    };
    writeFileSync(join(dir, "prometheus.yml"), JSON.stringify(config, null, 2));
    const port = await freePort();
    const scraper = new ManagedProcess(
      "prometheus",
      prometheus,
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      join(dir, "prometheus.log"),
    );
    const server = new Prometheus(dir, `http://127.0.0.1:${port}`, scraper);
    try {
      await waitFor(
        "prometheus /-/ready",
        async () => {
          if (!scraper.running) throw new Error(`prometheus exited:\n${scraper.logTail()}`);
          return (await fetch(`${server.url}/-/ready`)).ok;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      return server;
    } catch (error) {
      await server.stop();
      throw error;
    }
  }

  get pid(): number | undefined {
    return this.#process.pid;
  }

  /** An instant query at the current time; throws QueryError when Prometheus rejects it. */
  async query(expr: string): Promise<QueryResult> {
    const response = await fetch(`${this.url}/api/v1/query`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ query: expr }),
    });
    const body = (await response.json()) as {
      status: string;
      data?: QueryResult;
      errorType?: string;
      error?: string;
    };
    if (body.status !== "success" || !body.data) {
      throw new QueryError(expr, body.errorType ?? `HTTP ${response.status}`, body.error ?? "no data");
    }
    return body.data;
  }

  /** The series an instant query returns (a scalar counts as one). */
  async series(expr: string): Promise<{ metric: Record<string, string>; value: number }[]> {
    const data = await this.query(expr);
    switch (data.resultType) {
      case "vector":
        return data.result.map((sample) => ({ metric: sample.metric, value: Number(sample.value[1]) }));
      case "scalar":
        return [{ metric: {}, value: Number(data.result[1]) }];
      default:
        throw new Error(`unexpected ${data.resultType} result for ${expr}`);
    }
  }

  /** Rules as loaded and evaluated by the server: name, query, labels, health and last error. */
  async rules(): Promise<LoadedRule[]> {
    const response = await fetch(`${this.url}/api/v1/rules`);
    const body = (await response.json()) as { data: { groups: { rules: LoadedRule[] }[] } };
    return body.data.groups.flatMap((group) => group.rules);
  }

  /** Health of each scrape target ("up", "down", "unknown") with its last scrape error. */
  async targets(): Promise<{ health: string; lastError: string; labels: Record<string, string> }[]> {
    const response = await fetch(`${this.url}/api/v1/targets?state=active`);
    const body = (await response.json()) as {
      data: { activeTargets: { health: string; lastError: string; labels: Record<string, string> }[] };
    };
    return body.data.activeTargets;
  }

  logTail(): string {
    return this.#process.logTail();
  }

  /** Stops the server (SIGKILL after 10 s) and removes its directory. Safe to call twice. */
  async stop(): Promise<void> {
    await this.#process.stop();
    rmSync(this.dir, { recursive: true, force: true });
    this.#exitGuard.released();
  }

  /** For process exit handlers: kill without waiting, remove the directory. */
  destroyNow(): void {
    this.#process.killNow();
    rmSync(this.dir, { recursive: true, force: true });
    this.#exitGuard.released();
  }
}
