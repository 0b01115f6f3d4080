// A controller composed in the test's own process (composeController) over the real API server: for what a child
// process cannot be handed (a clock the test steps, leadership driven by hand). Its log is kept for a failing test.
import { Registry } from "prom-client";
import { type ComposeOptions, type ControllerParts, composeController } from "../../src/cli/compose.js";
import { parseConfig } from "../../src/config/config.js";
import { KubeConfigCredentials } from "../../src/kube/kubeconfig-credentials.js";
import { KubeTransport } from "../../src/kube/transport.js";
import { createMetrics } from "../../src/observe/metrics.js";
import { collectingLogger } from "../support/loggers.js";
import { controlPlane } from "./shared-control-plane.js";

export type InProcessController = {
  readonly parts: ControllerParts;
  readonly registry: Registry;
  /** Its log lines, as text. */
  readonly lines: readonly string[];
  /** Stops the manager (workers, caches) and closes its connections. */
  stop(): Promise<void>;
};

/**
 * `run` over the pods of one namespace, no leader election, with these flags added; the agent gate watches the same
 * namespace for its agents.
 */
export function startInProcessController(
  namespace: string,
  flags: readonly string[],
  options: ComposeOptions = {},
): InProcessController {
  const { config } = parseConfig(
    [
      "run",
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      "--leader-elect=false",
      `--cni-agent-namespace=${namespace}`,
      // The test's CNI agents are not Istio's: nothing repairs in place (see e2e-controller.ts).
      "--istio-repair=ignore",
      ...flags,
    ],
    {},
  );
  const { logger, lines } = collectingLogger({ format: "text" });
  const registry = new Registry();
  const metrics = createMetrics(registry, { ruleNames: config.rules.map((rule) => rule.name), version: "test" });
  const transport = new KubeTransport(new KubeConfigCredentials(controlPlane().kubeConfig()), {
    userAgent: "cni-repair/test",
  });
  const parts = composeController(config, transport, metrics, logger, { registry, ...options });
  parts.manager.start();
  return {
    parts,
    registry,
    lines,
    stop: async () => {
      await parts.manager.stop(5_000);
      await transport.close();
    },
  };
}
