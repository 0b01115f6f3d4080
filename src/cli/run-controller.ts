// The composition root: wires config, client, cache, queue, reconciler, metrics and HTTP, in order.
import { Registry } from "prom-client";
import { EventRecorder } from "../act/event-recorder.js";
import { Repairer } from "../act/repairer.js";
import type { Config } from "../config/config.js";
import { BrokenPods } from "../controller/broken-pods.js";
import { Controller } from "../controller/controller.js";
import { Reconciler } from "../controller/reconciler.js";
import { factsSchema } from "../detect/to-pod-facts.js";
import { PodReflector } from "../informer/reflector.js";
import { loadKubeConfig } from "../kube/connect.js";
import { KubeTransport } from "../kube/transport.js";
import { whoAmI } from "../kube/whoami.js";
import { startEventLoopMonitor } from "../observe/event-loop-monitor.js";
import { startHttpServer } from "../observe/http-server.js";
import { createLogger, flushLogger } from "../observe/logger.js";
import { createMetrics } from "../observe/metrics.js";
import { WorkQueue } from "../queue/work-queue.js";
import { VERSION } from "./version.js";

/** Event-loop lag beyond this fails /healthz: the process is wedged, and a restart is the cure. */
const MAX_EVENT_LOOP_LAG_MS = 10_000;

/** Runs until SIGTERM/SIGINT; returns the exit code. */
export async function runController(config: Config): Promise<number> {
  // 1. Logs and metrics first, so everything after can report.
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  const log = logger.child({ component: "main" });
  log.info("starting cni-repair", { version: VERSION, config: loggableConfig(config) });
  const registry = new Registry();
  const metrics = createMetrics(registry, { ruleNames: config.rules.map((rule) => rule.name), version: VERSION });

  // 2. The connection. Bad credentials are fatal; an unreachable server is not (the reflector retries).
  let transport: KubeTransport;
  try {
    const { config: kubeConfig, source } = loadKubeConfig({
      kubeconfig: config.kubeconfig ?? "",
      context: config.context ?? "",
    });
    transport = new KubeTransport(kubeConfig, {
      userAgent: `cni-repair/${VERSION}`,
      observe: (verb, code) => metrics.apiRequests.inc({ verb, code }),
    });
    log.info("using credentials", { source, server: transport.server });
  } catch (error) {
    log.error("cannot connect", { error: (error as Error).message });
    await flushLogger(logger);
    return 1;
  }
  try {
    log.info("connected", { server: transport.server, identity: await whoAmI(transport) });
  } catch (error) {
    log.warn("cannot reach the API server yet; will keep trying", {
      server: transport.server,
      error: (error as Error).message,
    });
  }

  // 3. The pipeline: reflector → store → controller (queue, reconciler) → repairer.
  const stop = new AbortController();
  const broken = new BrokenPods(metrics.brokenPods, metrics.detections);
  const queue = new WorkQueue({
    backoff: { baseMs: config.retryBaseDelayMs, maxMs: config.retryMaxDelayMs, jitter: 0.5 },
  });
  const events = new EventRecorder(transport, logger.child({ component: "events" }), () => metrics.eventsFailed.inc());
  const reflector = new PodReflector({
    transport,
    scope: { labelSelector: config.labelSelector, fieldSelector: config.fieldSelector },
    schema: factsSchema(config.rules, { labelKeys: [config.label.key] }),
    pageSize: config.listPageSize,
    watchTimeoutMs: config.watchTimeoutMs,
    stallTimeoutMs: config.watchStallTimeoutMs,
    backoff: { baseMs: 500, maxMs: 30_000, jitter: 0.5 },
    observer: {
      change: (change) => {
        metrics.cachePods.set(reflector.store.size);
        controller.onChange(change);
      },
      listed: (pods, durationMs) => {
        metrics.cachePods.set(pods);
        metrics.lastSyncTimestampSeconds.set(Date.now() / 1000);
        watchLog.info("listed pods", { pods, durationMs: Math.round(durationMs) });
      },
      watchEvent: (type) => {
        if (type === "ADDED" || type === "MODIFIED" || type === "DELETED" || type === "BOOKMARK") {
          metrics.watchEvents.inc({ type });
        }
        metrics.lastSyncTimestampSeconds.set(Date.now() / 1000);
      },
      watchRestart: (reason, error) => {
        metrics.watchRestarts.inc({ reason });
        const fields = { reason, ...(error !== undefined && { error: (error as Error).message }) };
        if (reason === "timeout") watchLog.debug("watch restarted", fields);
        else watchLog.warn("watch restarted", fields);
      },
    },
  });
  const watchLog = logger.child({ component: "reflector" });
  const reconciler = new Reconciler({
    store: reflector.store,
    rules: config.rules,
    mode: config.mode,
    label: config.label,
    repairer: new Repairer(transport, events, config.label),
    events,
    broken,
    metrics,
    logger: logger.child({ component: "reconciler" }),
  });
  const controller = new Controller({
    queue,
    reconciler,
    broken,
    rules: config.rules,
    workers: config.workers,
    maxRetries: config.maxRetries,
    resyncPeriodMs: config.resyncPeriodMs,
    metrics,
    logger: logger.child({ component: "controller" }),
  });

  // 4. Probes and metrics. Liveness: the event loop turns and the watch is not stuck; readiness: synced.
  const eventLoop = startEventLoopMonitor();
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    server = await startHttpServer({
      host: config.httpAddress,
      port: config.httpPort,
      registry,
      logger: logger.child({ component: "http" }),
      health: () => {
        const loopOk = eventLoop.isAlive(MAX_EVENT_LOOP_LAG_MS);
        const idleMs = Math.round(reflector.idleMs);
        // The watchdog restarts a stalled watch; twice its limit without a byte means restarts are failing.
        const watchOk = idleMs < 2 * config.watchStallTimeoutMs;
        return {
          ok: loopOk && watchOk,
          checks: {
            "event-loop": { ok: loopOk, detail: `lag ${Math.round(eventLoop.lagMs())} ms` },
            watch: { ok: watchOk, detail: `last activity ${idleMs} ms ago` },
          },
        };
      },
      ready: () => ({
        ok: reflector.synced,
        checks: { "initial-list": { ok: reflector.synced, detail: reflector.synced ? "synced" : "listing pods" } },
      }),
    });
  } catch (error) {
    log.error("cannot start the HTTP server", {
      address: config.httpAddress,
      port: config.httpPort,
      error: (error as Error).message,
    });
    eventLoop.stop();
    await transport.close();
    await flushLogger(logger);
    return 1;
  }

  // 5. Run: the reflector fills the cache; workers start at once, since changes only arrive once listed.
  const reflecting = reflector.run(stop.signal);
  const working = controller.run(stop.signal);
  void reflector.waitForSync(stop.signal).then((synced) => {
    if (synced) log.info("cache synced; repairing", { pods: reflector.store.size, broken: broken.size });
  });

  // 6. Shutdown: stop watching, let in-flight actions finish (bounded), close the server, flush logs.
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  log.info("shutting down", { signal, timeoutMs: config.shutdownTimeoutMs });
  stop.abort();
  const drained = await Promise.race([
    Promise.all([reflecting, working]).then(() => true),
    new Promise<false>((resolve) => setTimeout(resolve, config.shutdownTimeoutMs, false).unref()),
  ]);
  if (!drained) log.warn("in-flight actions did not finish within the shutdown timeout");
  eventLoop.stop();
  await server.close();
  await transport.close();
  log.info("stopped");
  await flushLogger(logger);
  return 0;
}

/** The effective configuration for the startup log: everything is safe to print (no secrets live here). */
function loggableConfig(config: Config): Record<string, unknown> {
  return { ...config, rules: config.rules.map((rule) => ({ ...rule })) };
}
