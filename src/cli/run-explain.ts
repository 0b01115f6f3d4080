// `cni-repair explain <namespace>/<pod>`: read the pod, list the caches its judgement reads once, then print the
// whole judgement about it. Nothing is written, and nothing that could write is built (no Event writer, queue, worker,
// controller or election).

import type { Config } from "../config/config.js";
import { type PodFacts, podKey } from "../detect/facts.js";
import { factsSchema, toPodFacts } from "../detect/to-pod-facts.js";
import { ApiError } from "../kube/api-error.js";
import type { KubeTransport } from "../kube/transport.js";
import { flushLogger } from "../observe/logger.js";
import { createMetrics } from "../observe/metrics.js";
import { Registry } from "../observe/prom-client.js";
import { connectCluster } from "./connect-cluster.js";
import { type Explanation, explainPod } from "./explain.js";
import { renderExplanation } from "./explain-output.js";
import { listedOnce, oneShotLogger } from "./one-shot.js";
import { VERSION } from "./version.js";

/** Exit codes: 0 explained, 1 no such pod, 2 errors (connection, configuration). */
export async function runExplain(config: Config, target: { namespace: string; name: string }): Promise<number> {
  const logger = oneShotLogger(config);
  const metrics = createMetrics(new Registry(), { ruleNames: config.rules.map((rule) => rule.name), version: VERSION });
  const what = podKey(target.namespace, target.name);
  try {
    const transport = await connectCluster(config, metrics, logger.child({ component: "main" }));
    // The pod first: one that does not exist needs no list at all.
    const read = await readPod(config, transport, target);
    let explanation: Explanation | undefined;
    if (read !== undefined) {
      const { query, failure } = await listedOnce(config, transport, metrics, logger);
      if (failure() !== undefined) {
        await transport.close();
        throw failure();
      }
      // In run's scope it is in the cache (as run sees it); outside, the pod as read, to say so rather than "not found".
      const cached = query.pod(what);
      explanation = explainPod(config, query, cached ?? read, cached !== undefined);
    }
    await transport.close();
    await flushLogger(logger);
    if (explanation === undefined) {
      process.stderr.write(`cni-repair explain: pod ${what} not found\n`);
      return 1;
    }
    process.stdout.write(renderExplanation(explanation, config.scan.output));
    return 0;
  } catch (error) {
    process.stderr.write(`cni-repair explain: ${error instanceof Error ? error.message : String(error)}\n`);
    await flushLogger(logger);
    return 2;
  }
}

async function readPod(
  config: Config,
  transport: KubeTransport,
  target: { namespace: string; name: string },
): Promise<PodFacts | undefined> {
  const path = `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.name)}`;
  try {
    const { body } = await transport.request("get", "GET", path, { timeoutMs: 30_000 });
    return toPodFacts(body, factsSchema(config.rules, { labelKeys: [config.label.key] }));
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}
