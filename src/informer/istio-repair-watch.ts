// Istio's own repair settings, kept current: the istio-cni-config ConfigMaps and the istio-cni-node DaemonSets' env,
// in every namespace (or the one pinned), each watched by name (a metadata.name field selector, so RBAC can grant
// just those objects by resourceNames, cluster-wide). Which namespace's apply is where Istio's CNI agent runs
// (detect/istio-repair-layout.ts): its DaemonSet, or its pods as the node-agent gate sees them. A read that is
// forbidden leaves the settings unknown, not the controller stuck.
import { fieldSelector, scopeOf } from "../config/selectors.js";
import { type IstioNamespaceFacts, resolveIstioRepair } from "../detect/istio-repair-layout.js";
import { ISTIO_CNI_CONFIGMAP, ISTIO_CNI_DAEMONSET, type IstioRepairState } from "../detect/istio-repair-settings.js";
import { describeMissing, istioRepairPermissions } from "../kube/access-review.js";
import { ApiError } from "../kube/api-error.js";
import type { Collection } from "../kube/collection-path.js";
import { type Listener, Publisher } from "../util/publisher.js";
import { FactsStore } from "./facts-store.js";
import { Reflector, type ReflectorObserver, type RunningCache } from "./reflector.js";
import type { ReflectorSettings } from "./reflector-settings.js";

/** The REPAIR_* values one object carries: a ConfigMap's data, or the literal env of a DaemonSet's containers. */
type RepairValues = { readonly namespace: string; readonly values: Readonly<Record<string, string>> };

const sameValues = (a: RepairValues, b: RepairValues): boolean => {
  const keys = Object.keys(a.values);
  return keys.length === Object.keys(b.values).length && keys.every((key) => a.values[key] === b.values[key]);
};

const isRepairKey = (key: string): boolean => key.startsWith("REPAIR_");

type Raw = { metadata?: { namespace?: unknown }; data?: unknown; spec?: unknown } | null;

function configMapValues(raw: unknown): RepairValues | undefined {
  const object = raw as Raw;
  const namespace = object?.metadata?.namespace;
  if (typeof namespace !== "string") return undefined;
  const data = typeof object?.data === "object" && object.data !== null ? (object.data as Record<string, unknown>) : {};
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(data))
    if (isRepairKey(key) && typeof value === "string") values[key] = value;
  return { namespace, values };
}

function daemonSetValues(raw: unknown): RepairValues | undefined {
  const object = raw as {
    metadata?: { namespace?: unknown };
    spec?: { template?: { spec?: { containers?: unknown } } };
  } | null;
  const namespace = object?.metadata?.namespace;
  if (typeof namespace !== "string") return undefined;
  const containers = object?.spec?.template?.spec?.containers;
  const values: Record<string, string> = {};
  for (const container of Array.isArray(containers) ? containers : []) {
    const env = (container as { env?: unknown } | null)?.env;
    for (const entry of Array.isArray(env) ? env : []) {
      const { name: key, value } = (entry ?? {}) as { name?: unknown; value?: unknown };
      // Only literal values: a valueFrom would need another read, and the ConfigMap is read directly anyway.
      if (typeof key === "string" && isRepairKey(key) && typeof value === "string") values[key] = value;
    }
  }
  return { namespace, values };
}

/** Where Istio's CNI agent pods run, as the node-agent gate's watch of them sees it. */
export type IstioAgentPods = {
  readonly namespaces: () => Iterable<string>;
  readonly cache: Pick<RunningCache, "synced" | "waitForSync"> & { subscribe(listener: () => void): void };
};

type Source = {
  readonly what: string;
  readonly collection: Collection;
  readonly reflector: Reflector<RepairValues>;
  /** A full list arrived (the reflector's own flag is set only after its observer hears of the list). */
  listed: boolean;
  /** The last list or watch was refused (403): this source's part stays unknown. */
  forbidden: string | undefined;
};

export type IstioRepairWatchOptions = {
  /** Where to read; undefined: every namespace (the settings then come from where the agent runs). */
  readonly namespace: string | undefined;
  /** Istio's agent pods, when the node-agent gate watches them: a namespace they run in counts as the agent's. */
  readonly agentPods?: IstioAgentPods | undefined;
  readonly settings: ReflectorSettings;
  /**
   * Telemetry for each watch (metrics by `name`, the watched object's; logs by `what`); a forbidden read is not
   * passed on as a failure.
   */
  readonly observer: (what: string, name: string) => ReflectorObserver;
  /** Each value that is not a boolean, when the settings are (re)read. */
  readonly onWarning?: (warning: string) => void;
};

export class IstioRepairWatch implements RunningCache {
  readonly #sources: readonly Source[];
  readonly #agentPods: IstioAgentPods | undefined;
  readonly #changes = new Publisher<IstioRepairState>();
  readonly #onWarning: IstioRepairWatchOptions["onWarning"];
  readonly #namespace: string | undefined;
  #state: IstioRepairState = { kind: "unknown", why: "not read yet" };
  #syncWaiters: (() => void)[] = [];

  constructor(options: IstioRepairWatchOptions) {
    this.#onWarning = options.onWarning;
    this.#namespace = options.namespace;
    this.#agentPods = options.agentPods;
    const source = (collection: Collection, name: string, transform: (raw: unknown) => RepairValues | undefined) => {
      const kind = collection === "configmaps" ? "ConfigMap" : "DaemonSet";
      const what =
        options.namespace === undefined ? `${kind}s ${name} in all namespaces` : `${kind} ${options.namespace}/${name}`;
      const telemetry = options.observer(what, name);
      const entry: Source = {
        what,
        collection,
        listed: false,
        forbidden: undefined,
        reflector: new Reflector<RepairValues>({
          ...options.settings,
          collection,
          scope: scopeOf({
            namespace: options.namespace,
            fieldSelector: fieldSelector([], [["metadata.name", "=", name]]),
          }),
          store: new FactsStore<RepairValues>((values) => values.namespace, sameValues),
          transform,
          observer: {
            ...telemetry,
            listed: (items, durationMs) => {
              entry.forbidden = undefined;
              entry.listed = true;
              telemetry.listed(items, durationMs);
              this.#update();
            },
            watchRestart: (reason, error) => {
              if (error instanceof ApiError && error.status === 403) {
                const first = entry.forbidden === undefined;
                entry.forbidden = error.message;
                if (first) this.#update();
                return;
              }
              telemetry.watchRestart(reason, error);
            },
          },
        }),
      };
      entry.reflector.subscribe(() => this.#update());
      return entry;
    };
    this.#sources = [
      source("configmaps", ISTIO_CNI_CONFIGMAP, configMapValues),
      source("daemonsets", ISTIO_CNI_DAEMONSET, daemonSetValues),
    ];
    this.#agentPods?.cache.subscribe(() => this.#update());
  }

  /** What is known of Istio's repair now. */
  get state(): IstioRepairState {
    return this.#state;
  }

  /** Hears each change of the state (not each write to the objects). */
  subscribe(listener: Listener<IstioRepairState>): void {
    this.#changes.subscribe(listener);
  }

  /**
   * Each source listed, or refused (a forbidden read must not keep the workers from starting), and the agent pods
   * listed: until then an agent may run where nothing is known yet.
   */
  get synced(): boolean {
    return this.#sources.every((s) => s.listed || s.forbidden !== undefined) && (this.#agentPods?.cache.synced ?? true);
  }

  get idleMs(): number {
    return Math.max(...this.#sources.map((s) => s.reflector.idleMs));
  }

  async run(signal: AbortSignal): Promise<void> {
    // The agent pods' cache is run by the node-agent gate; its first list can end without a change to hear.
    const agentPodsListed = this.#agentPods?.cache.waitForSync(signal).then(() => this.#update());
    await Promise.all([...this.#sources.map((s) => s.reflector.run(signal)), agentPodsListed]);
  }

  async waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.synced) return true;
    await new Promise<void>((resolve) => {
      this.#syncWaiters.push(resolve);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    return this.synced;
  }

  #update(): void {
    const { state, warnings } = this.#read();
    if (this.synced) {
      for (const resolve of this.#syncWaiters) resolve();
      this.#syncWaiters = [];
    }
    if (JSON.stringify(state) === JSON.stringify(this.#state)) return;
    this.#state = state;
    // Once per change of the settings, not once per write to the objects.
    for (const warning of warnings) this.#onWarning?.(warning);
    this.#changes.publish(state);
  }

  #read(): { state: IstioRepairState; warnings: readonly string[] } {
    const [configMap, daemonSet] = this.#sources as [Source, Source];
    // Once every source has answered: a refusal is then said once, naming all that was refused.
    if (!this.synced) return { state: { kind: "unknown", why: "not read yet" }, warnings: [] };
    const forbidden = this.#sources.filter((s) => s.forbidden !== undefined);
    if (forbidden.length > 0) {
      // The refusal is found here, not by a start-up access review: the read itself is the check (one request
      // fewer per permission, per instance of a fleet), and its answer is the same.
      const refused = forbidden.map((s) => `${s.what}: ${s.forbidden}`).join("; ");
      const grant = describeMissing(
        istioRepairPermissions(this.#namespace).filter((p) => forbidden.some((s) => s.collection === p.resource)),
      );
      const why = `cannot read Istio's repair settings (${refused}); ${grant}`;
      return { state: { kind: "unknown", why }, warnings: [] };
    }
    type Found = { configMap?: RepairValues["values"]; daemonSetEnv?: RepairValues["values"] };
    const byNamespace = new Map<string, Found>();
    const entry = (namespace: string) => {
      const known = byNamespace.get(namespace);
      if (known !== undefined) return known;
      const added: Found = {};
      byNamespace.set(namespace, added);
      return added;
    };
    for (const found of configMap.reflector.store.values()) entry(found.namespace).configMap = found.values;
    for (const found of daemonSet.reflector.store.values()) entry(found.namespace).daemonSetEnv = found.values;
    const podNamespaces = new Set(this.#agentPods?.namespaces() ?? []);
    for (const namespace of podNamespaces) entry(namespace);
    const facts: IstioNamespaceFacts[] = [...byNamespace].map(([namespace, found]) => ({
      namespace,
      configMap: found.configMap,
      daemonSetEnv: found.daemonSetEnv,
      agentPods: podNamespaces.has(namespace),
    }));
    return resolveIstioRepair(facts);
  }
}
