// The demo's live summary: one line per repair or hold from the controller's JSON logs, totals from /metrics.
import type { LogLine } from "../harness/controller-process.js";

/** Why a pod is held, in words (the reasons of cni_repair_pods_held). */
const HOLD_WORDS: Record<string, string> = {
  rate_limit: "deletion rate limit reached",
  node_inflight: "too many of our deletions still terminating on its node",
  namespace_inflight: "too many of our deletions still terminating in its namespace",
  cni_agent_not_ready: "its node's CNI agent is not Ready (deleting now would only break the new pod too)",
  loop_backoff: "its replacement came back broken on the same node; backing off",
  storm: "storm breaker open: too many pods broken at once",
  bare_pod: "no owner would recreate it, so it is labelled for a human instead",
  static_pod: "a static pod's mirror: the kubelet re-creates it, deleting it repairs nothing",
  terminal: "the pod already finished (Failed/Succeeded); deleting it repairs nothing",
};

const VERBS: Record<string, string> = { delete: "deleted", label: "labelled", report: "reported (dry run)" };

/** Turns controller log lines into the demo's narration, once per pod and outcome. */
export class LogNarrator {
  readonly #seen = new Set<string>();

  /** The line to print for this log line, or undefined when it is not news. */
  narrate(line: LogLine): string | undefined {
    const pod = `${String(line.namespace ?? "")}/${String(line.pod ?? "")}`;
    const rule = typeof line.rule === "string" ? line.rule : "";
    const why = typeof line.reason === "string" ? ` — ${rule}: ${line.reason}` : "";
    switch (line.msg) {
      case "repaired broken pod":
      case "would delete broken pod": {
        const verb = VERBS[String(line.action)] ?? String(line.action);
        return this.#once(`${pod} ${line.uid} ${line.action}`, `  ✔ ${verb} ${pod}${why}`);
      }
      case "broken pod held": {
        const reason = String(line.hold ?? "");
        const detail = typeof line.detail === "string" ? line.detail : (HOLD_WORDS[reason] ?? reason);
        return this.#once(`${pod} ${line.uid} held ${reason}`, `  ⏸ held ${pod} [${reason}]: ${detail}`);
      }
      case "repair failed":
        return `  ✘ ${String(line.action)} failed for ${pod}: ${String(line.detail ?? "")}`;
      case "cache synced; repairing":
        return `  controller synced: ${String(line.pods)} pods in its cache, ${String(line.broken)} broken`;
    }
    if (/leader|leading|storm breaker/i.test(line.msg)) {
      return `  controller: ${line.msg}${typeof line.detail === "string" ? ` (${line.detail})` : ""}`;
    }
    if (line.level === "warn" || line.level === "error") {
      const detail = line.error ?? line.detail ?? line.reason;
      return `  ! ${line.msg}${detail === undefined ? "" : `: ${String(detail)}`}`;
    }
    return undefined;
  }

  #once(key: string, text: string): string | undefined {
    if (this.#seen.has(key)) return undefined;
    this.#seen.add(key);
    return text;
  }
}

export type Sample = { readonly name: string; readonly labels: Record<string, string>; readonly value: number };

/** Parses the Prometheus text format (no exemplars, no timestamps: what prom-client writes). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] ?? "", m[2] ?? ""]),
    );
    samples.push({ name: match[1] ?? "", labels, value: Number(match[3]) });
  }
  return samples;
}

/** "repaired delete/success 3 · held now cni_agent_not_ready 2, terminal 1 · broken now istio 3 · leader yes" */
export function summarize(samples: readonly Sample[]): string {
  const nonZero = (name: string, label: (s: Sample) => string) =>
    samples
      .filter((s) => s.name === name && s.value > 0)
      .map((s) => `${label(s)} ${s.value}`)
      .join(", ") || "none";
  const leader = samples.find((s) => s.name === "cni_repair_leader");
  return [
    `repaired ${nonZero("cni_repair_pods_repaired_total", (s) => `${s.labels.type}/${s.labels.result}`)}`,
    `held now ${nonZero("cni_repair_pods_held", (s) => s.labels.reason ?? "")}`,
    `broken now ${nonZero("cni_repair_broken_pods", (s) => s.labels.rule ?? "")}`,
    ...(leader ? [`leader ${leader.value === 1 ? "yes" : "no"}`] : []),
  ].join(" · ");
}
