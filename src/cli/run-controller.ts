// The composition root: wires config, client, cache, queue, reconciler, metrics and HTTP, in order.

import type { Config } from "../config/config.js";
import { detect } from "../detect/detect.js";
import { startEventLoopMonitor } from "../observe/event-loop-monitor.js";
import { startHttpServer } from "../observe/http-server.js";
import { createLogger, flushLogger } from "../observe/logger.js";
import { createMetrics } from "../observe/metrics.js";
import { Registry } from "../observe/prom-client.js";
import { modeFor } from "../safety/policy.js";
import { messageOf } from "../util/message-of.js";
import { checkAdmissionPolicies } from "./admission-check.js";
import { composeController } from "./compose.js";
import { checkConnection, openTransport } from "./connect-cluster.js";
import { createElector } from "./election.js";
import { checkPermissions } from "./permission-check.js";
import { listenForStop, STOPPED } from "./stop-signal.js";
import { applyV8Flags } from "./v8-flags.js";
import { REVISION, VERSION } from "./version.js";

/** Event-loop lag beyond this fails /healthz: the process is wedged, and a restart is the cure. */
const MAX_EVENT_LOOP_LAG_MS = 10_000;
/**
 * The heartbeat that measures it, and the controller's only timer while idle (each wake-up of an idle process costs
 * ~0.5-1 ms of CPU here, more the longer it slept: more than the rest of an idle second): at the limit itself it sees
 * every stall longer than twice the limit, and wakes an idle process 0.1 times a second (the HTTP/2 PING adds one
 * every --watch-stall-timeout/2; the per-node install turns V8's memory reducer, one every 8 s, off).
 */
const EVENT_LOOP_HEARTBEAT_MS = MAX_EVENT_LOOP_LAG_MS;
/** /healthz fails once no cache has heard from the API server for this many --watch-stall-timeout periods. */
const API_SILENCE_LIMIT_STALLS = 2;

/** Runs until SIGTERM/SIGINT; returns the exit code. */
export async function runController(config: Config): Promise<number> {
  // 1. Logs and metrics first, so everything after can report.
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  const log = logger.child({ component: "main" });
  log.info("starting cni-repair", { version: VERSION, revision: REVISION, config: loggableConfig(config) });
  // From here a SIGTERM is a stop, also while the start-up checks below still wait on the server.
  const stop = listenForStop();
  const registry = new Registry();
  // Liveness' heartbeat, also the source of the event-loop lag metrics.
  const eventLoop = startEventLoopMonitor({ intervalMs: EVENT_LOOP_HEARTBEAT_MS });
  const metrics = createMetrics(registry, {
    eventLoop,
    ruleNames: config.rules.map((rule) => rule.name),
    version: VERSION,
    revision: REVISION,
    ruleActions: Object.fromEntries(
      config.rules.map((rule) => [rule.name, modeFor(config.mode, config.rules, rule.name)]),
    ),
  });

  // 2. The connection. Bad credentials are fatal; an unreachable server is not (the reflectors retry).
  let opened: Awaited<ReturnType<typeof openTransport>>;
  try {
    opened = await openTransport(config, metrics, log);
  } catch (error) {
    log.error("cannot connect", { error: messageOf(error) });
    eventLoop.stop();
    await flushLogger(logger);
    return 1;
  }
  const { transport } = opened;

  // 3. The controller's parts: reflectors → caches → triggers → queue → workers (reconciler, guards) → repairer,
  // under a manager that starts and stops them in order. With election, every replica keeps its caches warm;
  // only the leader's workers act.
  const elector = createElector(config, transport, metrics, logger);
  const parts = composeController(config, transport, metrics, logger, {
    registry,
    ...(elector && { leadership: elector, elector }),
  });
  if (!elector) metrics.leader.set(1);
  // The initial lists start now, while the checks below wait on their round trips: the pod list is start-up's
  // longest step, and a list only reads. Nothing acts (no election, no worker) until every check has passed.
  parts.manager.startCaches();
  const giveUp = async (code: number, lastWord?: string): Promise<number> => {
    await parts.manager.stop();
    eventLoop.stop();
    await transport.close();
    if (lastWord) log.info(lastWord);
    await flushLogger(logger);
    return code;
  };
  // Stopped before anything could act: nothing in flight, no Lease held, so no budget to spend.
  const stoppedInStart = async (): Promise<number> => {
    log.info("shutting down", { signal: stop.signal, during: "start-up checks" });
    return await giveUp(0, "stopped");
  };

  // 4. Who the server says we are (a credential it refuses is fatal), then refuse to run half-able: every
  // permission the mode needs, or exit 3 with the rules that would grant it. What bounds those permissions, at the
  // same time (round trips both): the admission policies that should be there. That one only warns.
  try {
    if ((await stop.unless(checkConnection(transport, opened.source, log))) === STOPPED) return await stoppedInStart();
  } catch (error) {
    log.error("cannot connect", { error: messageOf(error) });
    return await giveUp(1);
  }
  const checked = await stop.unless(
    Promise.all([checkPermissions(config, transport, log), checkAdmissionPolicies(config, transport, log)]),
  );
  if (checked === STOPPED) return await stoppedInStart();
  const [missing] = checked;
  if (missing !== undefined) {
    log.error("missing permissions", { missing });
    process.stderr.write(`cni-repair: missing permissions:\n${missing}\n`);
    return await giveUp(3);
  }

  // 5. Probes and metrics. Liveness: the event loop turns and the watch is not stuck; readiness: synced.
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    server = await startHttpServer({
      host: config.httpAddress,
      port: config.httpPort,
      registry,
      logger: logger.child({ component: "http" }),
      health: () => {
        const loopOk = eventLoop.isAlive(MAX_EVENT_LOOP_LAG_MS);
        const silentMs = Math.round(parts.manager.idleMs);
        // The watchdog restarts a stalled watch; twice its limit with no answer at all means restarts are failing.
        const limitMs = API_SILENCE_LIMIT_STALLS * config.watchStallTimeoutMs;
        const apiOk = silentMs < limitMs;
        const credentialsOk = !transport.credentialsRejected;
        return {
          ok: loopOk && apiOk && credentialsOk,
          checks: {
            "event-loop": { ok: loopOk, detail: `lag ${Math.round(eventLoop.lagMs())} ms` },
            "api-server": { ok: apiOk, detail: `last answer ${silentMs} ms ago (limit ${limitMs} ms)` },
            credentials: {
              ok: credentialsOk,
              detail: credentialsOk ? "accepted" : "401 Unauthorized, also after loading them afresh",
            },
          },
        };
      },
      ready: () => {
        const synced = parts.manager.synced;
        return { ok: synced, checks: { "initial-list": { ok: synced, detail: synced ? "synced" : "listing pods" } } };
      },
    });
  } catch (error) {
    log.error("cannot start the HTTP server", {
      address: config.httpAddress,
      port: config.httpPort,
      error: messageOf(error),
    });
    return await giveUp(1);
  }

  // 6. Run: the manager (reflectors already listing) starts the election, then (caches listed) the workers; not
  // after a stop that came meanwhile.
  if (stop.signal !== undefined) {
    await server.close();
    return await stoppedInStart();
  }
  parts.manager.start();
  const started = new AbortController();
  void parts.manager.waitForSync(started.signal).then((synced) => {
    if (!synced) return;
    applyV8Flags(config.v8FlagsAfterSync);
    // Counted by detection now: the workers have only begun, so their own tally (parts.broken) lags behind.
    let broken = 0;
    for (const facts of parts.query.pods()) if (detect(facts, config.rules, parts.context()).broken) broken++;
    log.info("cache synced; repairing", {
      pods: parts.query.size,
      broken,
      ...(config.v8FlagsAfterSync.length > 0 && { v8Flags: config.v8FlagsAfterSync }),
    });
  });

  // 7. Shutdown, in reverse (see controller/manager.ts): stop taking work and let in-flight actions finish, write
  // their Events, only then release the Lease (a successor must not act while we still do); then the HTTP server,
  // the connection, the logs. One --shutdown-timeout budget for the actions and their Events.
  const signal = await stop.received;
  log.info("shutting down", { signal, timeoutMs: config.shutdownTimeoutMs });
  started.abort();
  await parts.manager.stop(config.shutdownTimeoutMs);
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
