// The metrics every Go controller exports, under their own names, so dashboards and alerts written for
// controller-runtime and client-go work on this one: the workqueue family (label `name`) and controller-runtime's
// reconcile counters and histogram (label `controller`). Buckets are theirs too, so the series line up.
import type { Counter, Histogram, Registry } from "prom-client";
import { QueueMetrics } from "../queue/queue-metrics.js";
import { metricFactory } from "./metric-factory.js";

/** controller-runtime's result label values (pkg/internal/controller/metrics). */
export const RECONCILE_RESULTS = ["success", "error", "requeue", "requeue_after"] as const;
export type ReconcileResultLabel = (typeof RECONCILE_RESULTS)[number];

/** controller-runtime's controller_runtime_reconcile_time_seconds buckets. */
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The workqueue durations' buckets in controller-runtime: 10 ns to 1,000 s, ×10 each (ExponentialBuckets(10e-9, 10, 12)). */
const QUEUE_DURATION_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

export type StandardMetrics = {
  /** The `controller` label of the reconcile metrics (and `name` of our work queue). */
  readonly name: string;
  readonly reconcileTotal: Counter<"controller" | "result">;
  readonly reconcileErrors: Counter<"controller">;
  readonly reconcileTimeSeconds: Histogram<"controller">;
  /** The workqueue series of the queue called `name`, as the queue's observer; `now` in ms (the queue's clock). */
  queue(name: string, now?: () => number): QueueMetrics;
};

export function createStandardMetrics(registry: Registry, controller: string): StandardMetrics {
  const queues = new Map<string, QueueMetrics>();
  const { counter, gauge, histogram } = metricFactory(registry);
  /** A gauge over the work in progress, computed at scrape (client-go refreshes it every 500 ms instead). */
  const unfinishedGauge = (
    name: string,
    help: string,
    pick: (work: ReturnType<QueueMetrics["unfinished"]>) => number,
  ) =>
    gauge(name, help, ["name"], function collect() {
      for (const [queue, metrics] of queues) this.set({ name: queue }, pick(metrics.unfinished()));
    });

  // client-go labels every workqueue series by the queue's name.
  const queueCounter = (name: string, help: string) => counter(name, help, ["name"]);
  const queueHistogram = (name: string, help: string) => histogram(name, help, QUEUE_DURATION_BUCKETS, ["name"]);
  const depth = gauge("workqueue_depth", "Keys waiting in the work queue to be reconciled.", ["name"]);
  const adds = queueCounter(
    "workqueue_adds_total",
    "Keys added to the work queue (a key already waiting is not added again).",
  );
  const waited = queueHistogram(
    "workqueue_queue_duration_seconds",
    "Seconds a key waited in the work queue until a worker took it.",
  );
  const worked = queueHistogram(
    "workqueue_work_duration_seconds",
    "Seconds a worker spent on a key from the work queue.",
  );
  unfinishedGauge(
    "workqueue_unfinished_work_seconds",
    "Seconds of work in progress not yet counted in work_duration; a steady rise means stuck workers.",
    (work) => work.totalSeconds,
  );
  unfinishedGauge(
    "workqueue_longest_running_processor_seconds",
    "Seconds the longest-running worker has been on its key.",
    (work) => work.longestSeconds,
  );
  const retries = queueCounter(
    "workqueue_retries_total",
    "Keys put back on the work queue to be looked at after a delay.",
  );

  const reconcileTotal = counter(
    "controller_runtime_reconcile_total",
    "Reconciles, by controller and result (success, error, requeue, requeue_after).",
    ["controller", "result"],
  );
  const reconcileErrors = counter(
    "controller_runtime_reconcile_errors_total",
    "Reconciles that ended in an error (retried with backoff), by controller.",
    ["controller"],
  );
  const reconcileTimeSeconds = histogram(
    "controller_runtime_reconcile_time_seconds",
    "Seconds each reconcile took, by controller.",
    RECONCILE_TIME_BUCKETS,
    ["controller"],
  );
  // Like controller-runtime, every result series exists from the start.
  for (const result of RECONCILE_RESULTS) reconcileTotal.inc({ controller, result }, 0);
  reconcileErrors.inc({ controller }, 0);

  return {
    name: controller,
    reconcileTotal,
    reconcileErrors,
    reconcileTimeSeconds,
    queue(name, now) {
      const existing = queues.get(name);
      if (existing) return existing;
      const labels = { name };
      const metrics = new QueueMetrics(
        {
          depth: depth.labels(labels),
          adds: adds.labels(labels),
          queueDuration: waited.labels(labels),
          workDuration: worked.labels(labels),
          retries: retries.labels(labels),
        },
        now,
      );
      // Zero series at once, as client-go's provider creates them with the queue.
      depth.set(labels, 0);
      adds.inc(labels, 0);
      retries.inc(labels, 0);
      queues.set(name, metrics);
      return metrics;
    },
  };
}
