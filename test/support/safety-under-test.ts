// The safety object as the property tests of safety/ drive it: delete mode for the istio rule on the given clock,
// the work queue its events fill (the keys controller/triggers.ts would enqueue), and the check that no pod waits
// for an in-flight slot that is free.
import { expect } from "chai";
import { Registry } from "prom-client";
import { NO_CONTEXT } from "../../src/detect/detect.js";
import { presetRule } from "../../src/detect/presets.js";
import type { Rule } from "../../src/detect/rule.js";
import { createMetrics } from "../../src/observe/metrics.js";
import type { GuardEvent } from "../../src/safety/guard-events.js";
import type { GuardOptions } from "../../src/safety/guards.js";
import { Safety } from "../../src/safety/safety.js";
import { wokenKeys } from "../../src/safety/wakeups.js";
import type { Clock } from "../../src/util/clock.js";
import { guardsOff, TEST_LABEL } from "./test-reconciler.js";

export const ISTIO_RULES: readonly Rule[] = [presetRule("istio") as Rule];

/** Delete mode, the istio rule, the guards given (the rest off), metrics on a registry of its own. */
export function deleteModeSafety(guards: Partial<GuardOptions> & { readonly clock: Clock }): Safety {
  return new Safety({
    ...guardsOff(guards),
    rules: ISTIO_RULES,
    mode: "delete",
    label: TEST_LABEL,
    deleteBarePods: false,
    metrics: createMetrics(new Registry(), { ruleNames: ["istio"], version: "test" }),
    context: () => ({ ...NO_CONTEXT, nowMs: guards.clock.now() }),
  });
}

/**
 * The work queue the safety's events fill, as controller/triggers.ts maps them (a moved turn its one key, the rest
 * through safety/wakeups.ts); `onWake` sees each event with the keys it woke. The test removes a key it judges.
 */
export function wokenQueue(
  safety: Safety,
  onWake: (event: GuardEvent, keys: readonly string[]) => void = () => {},
): Set<string> {
  const queued = new Set<string>();
  safety.events.subscribe((event) => {
    const keys = event.kind === "turn_moved" ? [event.key] : wokenKeys(safety.holds, event);
    for (const key of keys) queued.add(key);
    onWake(event, keys);
  });
  return queued;
}

/** One line of pods waiting for a slot: who waits there (node_inflight on a node, namespace_inflight in a namespace). */
export type SlotLine = {
  readonly reason: "node_inflight" | "namespace_inflight";
  readonly where: { readonly node?: string; readonly namespace?: string };
  /** Slots free there now. */
  readonly free: number;
};

/**
 * Fails unless, on each line, as many of the pods waiting are queued as there are free slots (or all of them): no
 * pod waits for a slot that is free. Returns the lines where that asked for any pod.
 */
export function expectWaitersWoken(
  safety: Safety,
  queued: ReadonlySet<string>,
  lines: readonly SlotLine[],
): SlotLine[] {
  const asked: SlotLine[] = [];
  for (const line of lines) {
    const waiting = safety.holds.keys([line.reason], line.where);
    const fit = Math.min(line.free, waiting.length);
    const woken = waiting.filter((key) => queued.has(key)).length;
    expect(
      woken,
      `${line.reason} ${JSON.stringify(line.where)}: ${line.free} free, ${waiting.length} waiting`,
    ).to.be.at.least(fit);
    if (fit > 0) asked.push(line);
  }
  return asked;
}
