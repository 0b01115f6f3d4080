// `cni-repair explain <namespace>/<pod>`: list as run would, then print the whole judgement about one pod.
// Nothing is written: the controller runs without leadership.
import { Registry } from "prom-client";
import type { Config } from "../config/config.js";
import { type PodFacts, podKey } from "../detect/facts.js";
import { factsSchema, toPodFacts } from "../detect/to-pod-facts.js";
import { ApiError } from "../kube/api-error.js";
import type { KubeTransport } from "../kube/transport.js";
import { flushLogger } from "../observe/logger.js";
import { createMetrics } from "../observe/metrics.js";
import { connectCluster } from "./connect-cluster.js";
import { type Explanation, explainPod } from "./explain.js";
import { renderExplanation } from "./explain-output.js";
import { oneShotLogger, startSynced } from "./one-shot.js";
import { VERSION } from "./version.js";

/** Exit codes: 0 explained, 1 no such pod, 2 errors (connection, configuration). */
export async function runExplain(config: Config, target: { namespace: string; name: string }): Promise<number> {
  const logger = oneShotLogger(config);
  const metrics = createMetrics(new Registry(), { ruleNames: config.rules.map((rule) => rule.name), version: VERSION });
  const what = podKey(target.namespace, target.name);
  try {
    const transport = await connectCluster(config, metrics, logger.child({ component: "main" }));
    const { parts, failure, stop } = await startSynced(config, transport, metrics, logger, {
      writes: false,
      startupTaintsReadOnly: true,
    });
    let explanation: Explanation | undefined;
    if (failure() === undefined) {
      const cached = parts.pods.get(what);
      // Outside run's scope the pod is not in the cache: read it directly, to say so rather than "not found".
      const facts = cached ?? (await readPod(config, transport, target));
      if (facts !== undefined) explanation = explainPod(config, parts, facts, cached !== undefined);
    }
    await stop();
    await transport.close();
    if (failure() !== undefined) throw failure();
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
