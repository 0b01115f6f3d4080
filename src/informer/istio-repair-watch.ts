// Istio's own repair settings, kept current: the istio-cni-config ConfigMap and the istio-cni-node DaemonSet's env
// in the CNI agent's namespace, each watched by name (a metadata.name field selector, so RBAC can grant just that
// object by resourceNames). A read that is forbidden leaves the settings unknown, not the controller stuck.
import { fieldSelector, scopeOf } from "../config/selectors.js";
import {
  ISTIO_CNI_CONFIGMAP,
  ISTIO_CNI_DAEMONSET,
  type IstioRepairState,
  parseIstioRepair,
} from "../detect/istio-repair-settings.js";
import { ApiError } from "../kube/api-error.js";
import type { Collection } from "../kube/collection-path.js";
import { type Listener, Publisher } from "../util/publisher.js";
import { FactsStore } from "./facts-store.js";
import { Reflector, type ReflectorObserver, type RunningCache } from "./reflector.js";
import type { ReflectorSettings } from "./reflector-settings.js";

/** The REPAIR_* values one object carries: a ConfigMap's data, or the literal env of a DaemonSet's containers. */
type RepairValues = { readonly name: string; readonly values: Readonly<Record<string, string>> };

const sameValues = (a: RepairValues, b: RepairValues): boolean => {
  const keys = Object.keys(a.values);
  return keys.length === Object.keys(b.values).length && keys.every((key) => a.values[key] === b.values[key]);
};

const isRepairKey = (key: string): boolean => key.startsWith("REPAIR_");

type Raw = { metadata?: { name?: unknown }; data?: unknown; spec?: unknown } | null;

function configMapValues(raw: unknown): RepairValues | undefined {
  const object = raw as Raw;
  const name = object?.metadata?.name;
  if (typeof name !== "string") return undefined;
  const data = typeof object?.data === "object" && object.data !== null ? (object.data as Record<string, unknown>) : {};
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(data))
    if (isRepairKey(key) && typeof value === "string") values[key] = value;
  return { name, values };
}

function daemonSetValues(raw: unknown): RepairValues | undefined {
  const object = raw as { metadata?: { name?: unknown }; spec?: { template?: { spec?: { containers?: unknown } } } };
  const name = object?.metadata?.name;
  if (typeof name !== "string") return undefined;
  const containers = object.spec?.template?.spec?.containers;
  const values: Record<string, string> = {};
  for (const container of Array.isArray(containers) ? containers : []) {
    const env = (container as { env?: unknown } | null)?.env;
    for (const entry of Array.isArray(env) ? env : []) {
      const { name: key, value } = (entry ?? {}) as { name?: unknown; value?: unknown };
      // Only literal values: a valueFrom would need another read, and the ConfigMap is read directly anyway.
      if (typeof key === "string" && isRepairKey(key) && typeof value === "string") values[key] = value;
    }
  }
  return { name, values };
}

type Source = {
  readonly what: string;
  readonly reflector: Reflector<RepairValues>;
  /** A full list arrived (the reflector's own flag is set only after its observer hears of the list). */
  listed: boolean;
  /** The last list or watch was refused (403): this source's part stays unknown. */
  forbidden: string | undefined;
};

export type IstioRepairWatchOptions = {
  readonly namespace: string;
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
  readonly namespace: string;
  readonly #sources: readonly Source[];
  readonly #changes = new Publisher<IstioRepairState>();
  readonly #onWarning: IstioRepairWatchOptions["onWarning"];
  #state: IstioRepairState = { kind: "unknown", why: "not read yet" };
  #syncWaiters: (() => void)[] = [];

  constructor(options: IstioRepairWatchOptions) {
    this.namespace = options.namespace;
    this.#onWarning = options.onWarning;
    const source = (collection: Collection, name: string, transform: (raw: unknown) => RepairValues | undefined) => {
      const what = `${collection === "configmaps" ? "ConfigMap" : "DaemonSet"} ${options.namespace}/${name}`;
      const telemetry = options.observer(what, name);
      const entry: Source = {
        what,
        listed: false,
        forbidden: undefined,
        reflector: new Reflector<RepairValues>({
          ...options.settings,
          collection,
          scope: scopeOf({
            namespace: options.namespace,
            fieldSelector: fieldSelector([], [["metadata.name", "=", name]]),
          }),
          store: new FactsStore<RepairValues>((values) => values.name, sameValues),
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
  }

  /** What is known of Istio's repair now. */
  get state(): IstioRepairState {
    return this.#state;
  }

  /** Hears each change of the state (not each write to the objects). */
  subscribe(listener: Listener<IstioRepairState>): void {
    this.#changes.subscribe(listener);
  }

  /** Each source listed, or refused: a forbidden read must not keep the workers from starting. */
  get synced(): boolean {
    return this.#sources.every((s) => s.listed || s.forbidden !== undefined);
  }

  get idleMs(): number {
    return Math.max(...this.#sources.map((s) => s.reflector.idleMs));
  }

  async run(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#sources.map((s) => s.reflector.run(signal)));
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
      const why = `cannot read ${forbidden.map((s) => `${s.what}: ${s.forbidden}`).join("; ")}`;
      return { state: { kind: "unknown", why }, warnings: [] };
    }
    const fromMap = configMap.reflector.store.get(ISTIO_CNI_CONFIGMAP);
    const fromEnv = daemonSet.reflector.store.get(ISTIO_CNI_DAEMONSET);
    // The agent sees both: the chart loads the ConfigMap with envFrom, and an explicit env entry wins over it.
    const values = { ...fromMap?.values, ...fromEnv?.values };
    const from = [fromMap && configMap.what, fromEnv && Object.keys(fromEnv.values).length > 0 && daemonSet.what];
    const parsed = parseIstioRepair(values, from.filter(Boolean).join(" + ") || configMap.what, {
      // A ConfigMap of Istio's chart means its defaults apply; a DaemonSet alone says so only with a REPAIR_* entry.
      requireAKey: fromMap === undefined,
    });
    if (parsed === undefined) return { state: { kind: "absent" }, warnings: [] };
    return { state: { kind: "detected", settings: parsed.settings }, warnings: parsed.warnings };
  }
}
