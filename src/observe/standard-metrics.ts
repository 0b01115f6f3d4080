// The metrics every Go controller exports, under their own names, so dashboards and alerts written for
// controller-runtime and client-go work on this one: the workqueue family (label `name`) and controller-runtime's
// reconcile counters and histogram (label `controller`). Buckets are theirs too, so the series line up.
import type { Registry } from "prom-client";
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

/** One controller's reconcile series (label `controller`), zero from the start. */
export type ControllerSeries = {
  readonly name: string;
  /** One reconcile ended with this result after this many seconds. */
  reconciled(result: ReconcileResultLabel, seconds: number): void;
  /** A reconcile threw: recovered, retried like an error, and counted (controller-runtime's panics). */
  panicked(): void;
  /** A worker starts (+1) or ends (-1) a reconcile. */
  working(delta: 1 | -1): void;
};

export type StandardMetrics = {
  /** The `controller` label of the pod controller (and `name` of its work queue). */
  readonly name: string;
  /** The reconcile series of the controller `name` with `workers` workers; its queue is `queue(name)`. */
  controller(name: string, workers: number): ControllerSeries;
  /** The workqueue series of the queue called `name`, as the queue's observer; `now` in ms (the queue's clock). */
  queue(name: string, now?: () => number): QueueMetrics;
};

export function createStandardMetrics(registry: Registry, podController: string): StandardMetrics {
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
  const reconcilePanics = counter(
    "controller_runtime_reconcile_panics_total",
    "Reconciles that threw (a bug): recovered, counted as errors and retried, by controller.",
    ["controller"],
  );
  const reconcileTimeSeconds = histogram(
    "controller_runtime_reconcile_time_seconds",
    "Seconds each reconcile took, by controller.",
    RECONCILE_TIME_BUCKETS,
    ["controller"],
  );
  const maxConcurrent = gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Workers of each controller (at most this many reconciles at once).",
    ["controller"],
  );
  const activeWorkers = gauge("controller_runtime_active_workers", "Workers busy on a key now, by controller.", [
    "controller",
  ]);

  const queue = (name: string, now?: () => number): QueueMetrics => {
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
  };

  return {
    name: podController,
    controller(name, workers) {
      const labels = { controller: name };
      // Like controller-runtime, every result series exists from the start.
      for (const result of RECONCILE_RESULTS) reconcileTotal.inc({ ...labels, result }, 0);
      reconcileErrors.inc(labels, 0);
      reconcilePanics.inc(labels, 0);
      maxConcurrent.set(labels, workers);
      activeWorkers.set(labels, 0);
      const time = reconcileTimeSeconds.labels(labels);
      return {
        name,
        reconciled(result, seconds) {
          reconcileTotal.inc({ ...labels, result });
          time.observe(seconds);
          if (result === "error") reconcileErrors.inc(labels);
        },
        panicked: () => reconcilePanics.inc(labels),
        working: (delta) => activeWorkers.inc(labels, delta),
      };
    },
    queue,
  };
}
