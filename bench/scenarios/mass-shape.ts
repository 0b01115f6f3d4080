// Scenario 4, second half: cni-repair with its default limits on the same mass breakage, to show the guards' shape.
import { startController } from "../lib/controllers.js";
import type { BenchContext } from "./context.js";
import { type MassResult, massRepair } from "./mass-repair.js";

export async function massRepairWithDefaultLimits(ctx: BenchContext, size: number): Promise<MassResult> {
  const started = await startController({
    kind: "cni-repair",
    kubeconfig: ctx.kubeconfig,
    inClusterEnv: ctx.inClusterEnv,
    // Only what this cluster needs (no CNI agents, one replica); every limit at its default.
    extraArgs: ctx.ourFlags.always,
    readyTimeoutMs: 60_000 + size * 5,
  });
  try {
    return await massRepair(ctx, size, ctx.params.massPods, ctx.params.massLimitedSeconds * 1000);
  } finally {
    await started.process.stop();
  }
}
