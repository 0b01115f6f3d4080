// What one reconcile does with each answer of the API server, per mode, against a scripted transport: which call
// it makes, what it counts, and what the queue is told next. 404 and 409 are skips (409 looks again soon), 429
// waits for Retry-After without spending a retry, 403 and 500 are failures retried with backoff.
import { expect } from "chai";
import type { Mode } from "../../../src/config/config.js";
import type { ReconcileResult } from "../../../src/controller/reconcile-result.js";
import { exited, init, istioPod } from "../../support/pod-builders.js";
import { type ScriptedAnswer, type ScriptedCall, scriptedTransport } from "../../support/scripted-transport.js";
import { testReconciler } from "../../support/test-reconciler.js";

const RETRY_AFTER_SECONDS = 7;

/** The call each mode makes: a DELETE, a merge patch of pods/status, a dry-run DELETE. */
const CALLS: Record<Mode, { method: string; path: RegExp; dryRun: boolean }> = {
  delete: { method: "DELETE", path: /\/pods\/reviews-0$/, dryRun: false },
  label: { method: "PATCH", path: /\/pods\/reviews-0\/status$/, dryRun: false },
  report: { method: "DELETE", path: /\/pods\/reviews-0$/, dryRun: true },
};

type Expected = { readonly result: string; readonly next: ReconcileResult["kind"]; readonly afterMs?: number };

/** By status: the repair result counted and what the reconcile tells the queue. */
const OUTCOMES: Record<number, (mode: Mode) => Expected> = {
  200: (mode) => ({ result: mode === "report" ? "dry_run" : "success", next: "done" }),
  404: () => ({ result: "skip", next: "done" }),
  409: () => ({ result: "skip", next: "requeue", afterMs: 1_000 }),
  403: () => ({ result: "fail", next: "retry" }),
  429: () => ({ result: "throttled", next: "requeue", afterMs: RETRY_AFTER_SECONDS * 1000 }),
  500: () => ({ result: "fail", next: "retry" }),
};

function setup(mode: Mode, status: number) {
  const writes = (call: ScriptedCall) => call.method !== "POST";
  const { transport, calls } = scriptedTransport({
    request: (call): ScriptedAnswer =>
      !writes(call) || status === 200
        ? { body: {} }
        : { status, ...(status === 429 && { retryAfterSeconds: RETRY_AFTER_SECONDS }) },
  });
  const { reconciler, store, metrics, events } = testReconciler({
    transport,
    mode,
    guards: { loopBackoff: { baseMs: 1_000, maxMs: 10_000 }, storm: { maxBrokenFraction: 1, minBroken: 1 } },
    context: () => ({
      nowMs: Date.now(),
      namespaceLabel: () => undefined,
      seenUnenrolledSince: () => undefined,
      readiness: { graceStart: () => undefined },
    }),
  });
  const pod = istioPod([init("istio-validation", "waiting", exited(126))], { name: "reviews-0" });
  store.upsert(pod);
  return { reconciler, calls: () => calls.filter(writes), metrics, events, key: `${pod.namespace}/${pod.name}` };
}

describe("seams/Reconciler: each API answer, per mode", () => {
  for (const mode of ["delete", "label", "report"] as const) {
    for (const status of [200, 404, 409, 403, 429, 500]) {
      const expected = OUTCOMES[status]?.(mode) as Expected;
      it(`${mode}: ${status} → ${expected.result}, ${expected.next}${expected.afterMs ? ` after ${expected.afterMs} ms` : ""}`, async () => {
        const { reconciler, calls, metrics, events, key } = setup(mode, status);
        const outcome = await reconciler.reconcile(key);
        await events.drain();
        const [call, ...more] = calls();
        expect(more).to.deep.equal([]);
        expect(call?.method).to.equal(CALLS[mode].method);
        expect(call?.path).to.match(CALLS[mode].path);
        const body = call?.body as {
          preconditions?: unknown;
          dryRun?: unknown;
          metadata?: { resourceVersion?: unknown };
        };
        if (mode === "label") expect(body.metadata?.resourceVersion).to.equal("1000");
        else {
          expect(body.preconditions).to.deep.equal({
            uid: "0b5c3f6e-6a43-4c59-9d1f-1d1c7a0c9e01",
            resourceVersion: "1000",
          });
          expect(body.dryRun).to.deep.equal(CALLS[mode].dryRun ? ["All"] : undefined);
        }
        expect(outcome.kind).to.equal(expected.next);
        if (outcome.kind === "requeue") expect(outcome.afterMs).to.equal(expected.afterMs);
        if (outcome.kind === "retry") expect(outcome.notBeforeMs).to.equal(0);
        const counted = await metrics.podsRepaired.get();
        const nonZero = counted.values.filter((value) => value.value > 0).map((value) => value.labels);
        expect(nonZero).to.deep.equal([{ type: mode, result: expected.result }]);
      });
    }
  }
});
