// parseConfig: argv and environment to the command to run and a fully checked, typed Config.

import { isDeepStrictEqual } from "node:util";
import { ISTIO_RULE } from "../detect/istio-repair-settings.js";
import type { Rule } from "../detect/rule.js";
import { type AgentNamespaces, agentNamespaceOf } from "./agent-namespaces.js";
import { environmentUse, refuseVariable } from "./applicability.js";
import type { Subcommand } from "./commands.js";
import { ConfigError, invalidValue } from "./config-error.js";
import { envVarName, type FlagName, type FlagTable, type FlagValues, flagNames, flags } from "./flags.js";
import { type Command, readArgs, type Setting } from "./read-args.js";
import { buildRules } from "./rules.js";
import { fieldSelector, liftNamespace, type Scope, scopeOf } from "./selectors.js";
import { type StartupTaintConfig, startupTaintConfig } from "./startup-taint.js";
import { rejectUnknownEnv } from "./unknown-env.js";

export type Mode = FlagValues["mode"];
export type LogLevel = FlagValues["log-level"];
export type LogFormat = FlagValues["log-format"];
export type OutputFormat = FlagValues["output"];

export type Config = {
  /** Presets in the order given, then the custom rule; never empty, names unique. */
  readonly rules: readonly Rule[];
  readonly mode: Mode;
  /** The label put on broken pods in label mode. */
  readonly label: { readonly key: string; readonly value: string };
  /**
   * The pods listed: --namespaces when it names one, --label-selector, and --field-selector with
   * `spec.nodeName=<node>` (--node-name) and `metadata.namespace!=<ns>` (--exclude-namespaces) added.
   */
  readonly scope: Scope;
  readonly nodeName: string | undefined;
  /** undefined: leave it to the client's default resolution. */
  readonly kubeconfig: string | undefined;
  /** undefined: the kubeconfig's current context. */
  readonly context: string | undefined;
  readonly workers: number;
  readonly maxRetries: number;
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
  /** 0: no periodic resync. */
  readonly resyncPeriodMs: number;
  readonly listPageSize: number;
  /** Stream the initial pod list (WatchList) where the server offers it. */
  readonly watchList: boolean;
  /** Whole seconds, sent as the watch's timeoutSeconds. */
  readonly watchTimeoutMs: number;
  readonly watchStallTimeoutMs: number;
  readonly httpAddress: string;
  /** 0: pick a free port. */
  readonly httpPort: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  /** --log-format or its variable was given (scan logs text on a terminal unless JSON was asked for). */
  readonly logFormatGiven: boolean;
  readonly shutdownTimeoutMs: number;
  /** V8 flags `run` sets once its modules are loaded (cli/v8-flags.ts). */
  readonly v8Flags: readonly string[];
  /** V8 flags `run` sets once its caches have synced. */
  readonly v8FlagsAfterSync: readonly string[];
  /** Pods in other namespaces are ignored; empty: all namespaces. */
  readonly namespaces: readonly string[];
  readonly excludeNamespaces: readonly string[];
  readonly deleteBarePods: boolean;
  /** 0 in any field: that limit is off. */
  readonly limits: {
    readonly deletionsPerMinute: number;
    /** The pace of pods whose breakage a CNI agent outage explains. */
    readonly outageDeletionsPerMinute: number;
    readonly deletionBurst: number;
    readonly inflightPerNode: number;
    readonly inflightPerNamespace: number;
  };
  /** undefined: the CNI-readiness gate is off. */
  readonly cniAgentGate:
    | {
        readonly minReadyMs: number;
        /** Overrides every rule's own agent selector. */
        readonly selector: string | undefined;
        /** Where each rule's agent pods run (--cni-agent-namespace). */
        readonly namespaces: AgentNamespaces;
      }
    | undefined;
  /**
   * Istio's own repair (istio rule only): undefined with --istio-repair=ignore or without the istio rule. Its
   * settings are read where Istio's CNI agent runs: the istio rule's --cni-agent-namespace, else (undefined) found
   * in any namespace.
   */
  readonly istioRepair: { readonly namespace: string | undefined } | undefined;
  /** undefined: startup taints are not managed. */
  readonly startupTaint: StartupTaintConfig | undefined;
  readonly loopBackoff: { readonly baseMs: number; readonly maxMs: number };
  readonly storm: { readonly maxBrokenFraction: number; readonly minBroken: number; readonly windowMs: number };
  /** undefined: no election, this instance always acts. */
  readonly leaderElection:
    | {
        /** undefined: the pod's namespace in-cluster, else "default". */
        readonly namespace: string | undefined;
        readonly id: string;
        readonly leaseDurationMs: number;
        readonly renewDeadlineMs: number;
        readonly retryPeriodMs: number;
      }
    | undefined;
  readonly scan: { readonly output: OutputFormat; readonly repair: boolean };
  /** The admission policies (and their bindings, of the same names) the startup check expects. */
  readonly admissionPolicies: readonly string[];
};

export type ParsedConfig = {
  readonly command: Command;
  /** With --help: the subcommand whose help is asked for; undefined for the overview. */
  readonly helpFor?: Subcommand;
  readonly config: Config;
  /** explain's pod. */
  readonly target?: { readonly namespace: string; readonly name: string };
};

/**
 * A flag or its CNI_REPAIR_* env var, else the default; both given must agree (refuseDisagreement). Throws
 * ConfigError naming the flag or env var and the bad text, a flag and a variable that disagree, an unknown CNI_REPAIR_* variable, or a flag (or, for run, a variable) the
 * subcommand does not accept (applicability.ts). For help and version only argv is checked and config holds the
 * defaults, so a broken environment cannot stop someone reading --help. `table` is the flag table; tests give one
 * built from changed presets.
 */
export function parseConfig(
  argv: string[],
  env: Record<string, string | undefined>,
  table: FlagTable = flags,
): ParsedConfig {
  const args = readArgs(argv);
  const { command } = args;
  if (command === "help" || command === "version") {
    return { command, ...(args.helpFor && { helpFor: args.helpFor }), config: defaultConfig(table) };
  }
  rejectUnknownEnv(
    env,
    flagNames.flatMap((name) => envVarName(name) ?? []),
  );
  const given = new Map<FlagName, Setting>();
  for (const name of flagNames) {
    const envName = envVarName(name);
    const text = envName === undefined ? undefined : env[envName];
    if (envName !== undefined && text !== undefined) {
      const use = environmentUse(command, name);
      if (use === "refuse") throw refuseVariable(command, name, envName);
      if (use === "use") given.set(name, { text, source: envName });
    }
    const fromArgv = args.settings.get(name);
    if (fromArgv === undefined) continue;
    const fromEnv = given.get(name);
    if (fromEnv !== undefined) refuseDisagreement(table, name, fromEnv, fromArgv);
    given.set(name, fromArgv);
  }
  return {
    command,
    config: toConfig(table, parseValues(table, given), given),
    ...(args.target && { target: args.target }),
  };
}

/**
 * A variable and a flag for one setting must agree (the same value, however written: 10s and 10000ms): a silent
 * winner would leave a Deployment's env or an overlay's flag doing nothing, with nobody told.
 */
function refuseDisagreement(table: FlagTable, name: FlagName, fromEnv: Setting, fromArgv: Setting): void {
  const [env, argv] = [fromEnv, fromArgv].map((setting) => {
    const parsed = table[name].parse(setting.text);
    if (!parsed.ok) throw invalidValue(setting.source, setting.text, parsed.reason);
    return parsed.value;
  });
  if (isDeepStrictEqual(env, argv)) return;
  throw new ConfigError(
    `${fromEnv.source}=${JSON.stringify(fromEnv.text)} and ${fromArgv.source}=${JSON.stringify(fromArgv.text)} ` +
      `disagree: set one of them, or the same value in both (e.g. env -u ${fromEnv.source} cni-repair ...)`,
  );
}

/** The config with every flag at its default. */
export function defaultConfig(table: FlagTable = flags): Config {
  return toConfig(table, parseValues(table, new Map()), new Map());
}

function parseValues(table: FlagTable, given: ReadonlyMap<FlagName, Setting>): FlagValues {
  // Built by name, so TypeScript cannot follow the per-key types; each value comes from that key's own parser.
  const values: Record<string, unknown> = {};
  for (const name of flagNames) {
    const setting = given.get(name);
    if (setting === undefined) {
      values[name] = table[name].default;
      continue;
    }
    const parsed = table[name].parse(setting.text);
    if (!parsed.ok) throw invalidValue(setting.source, setting.text, parsed.reason);
    values[name] = parsed.value;
  }
  return values as FlagValues;
}

function toConfig(table: FlagTable, values: FlagValues, given: ReadonlyMap<FlagName, Setting>): Config {
  const at = (name: FlagName): Setting => given.get(name) ?? { text: table[name].defaultText, source: `--${name}` };
  if (values["retry-base-delay"] > values["retry-max-delay"]) {
    const base = at("retry-base-delay");
    throw invalidValue(base.source, base.text, `expected at most --retry-max-delay (${at("retry-max-delay").text})`);
  }
  const durationOrder = (shorter: FlagName, longer: FlagName) => {
    if ((values[shorter] as number) >= (values[longer] as number)) {
      const setting = at(shorter);
      throw invalidValue(setting.source, setting.text, `expected less than --${longer} (${at(longer).text})`);
    }
  };
  const electing = values["leader-elect"];
  if (electing) {
    durationOrder("renew-deadline", "lease-duration");
    // client-go's rule: a renewal must have room for a jittered retry before the deadline.
    if (values["retry-period"] * 1.2 >= values["renew-deadline"]) {
      const retry = at("retry-period");
      throw invalidValue(
        retry.source,
        retry.text,
        `expected less than --renew-deadline (${at("renew-deadline").text}) / 1.2`,
      );
    }
  }
  if (values["loop-backoff"] > values["loop-backoff-max"]) {
    const base = at("loop-backoff");
    throw invalidValue(base.source, base.text, `expected at most --loop-backoff-max (${at("loop-backoff-max").text})`);
  }
  const rules = buildRules(values, given);
  const gateOn = values["cni-agent-gate"] === "on";
  const agentSelector = values["cni-agent-selector"];
  const ungated = rules.find((rule) => rule.cniAgentSelector === undefined);
  if (gateOn && agentSelector === "" && ungated !== undefined) {
    const gate = at("cni-agent-gate");
    throw invalidValue(
      gate.source,
      gate.text,
      `rule ${ungated.name} has no CNI agent selector: set --cni-agent-selector, or --cni-agent-gate=off`,
    );
  }
  const agentNamespaces = values["cni-agent-namespace"];
  const unknownRule = Object.keys(agentNamespaces.byRule).find((name) => !rules.some((rule) => rule.name === name));
  if (unknownRule !== undefined) {
    const setting = at("cni-agent-namespace");
    throw invalidValue(
      setting.source,
      setting.text,
      `names the rule ${unknownRule}, which is not in use (rules: ${rules.map((rule) => rule.name).join(", ")})`,
    );
  }
  const node = values["node-name"];
  const namespaces = values.namespaces;
  // One namespace, and exclusions, are filtered by the server; several namespaces only client-side.
  // A --field-selector pinning one namespace lists that namespace's collection, like --namespaces with one.
  const written =
    namespaces.length === 1
      ? { namespace: namespaces[0], rest: values["field-selector"] }
      : liftNamespace(values["field-selector"]);
  const scope = scopeOf({
    namespace: written.namespace,
    labelSelector: values["label-selector"],
    fieldSelector: fieldSelector(
      [written.rest],
      [
        ...(node === "" ? [] : [["spec.nodeName", "=", node] as const]),
        ...values["exclude-namespaces"].map((namespace) => ["metadata.namespace", "!=", namespace] as const),
      ],
    ),
  });
  return Object.freeze({
    rules,
    mode: values.mode,
    label: Object.freeze({ key: values["label-key"], value: values["label-value"] }),
    scope,
    nodeName: node === "" ? undefined : node,
    kubeconfig: values.kubeconfig === "" ? undefined : values.kubeconfig,
    context: values.context === "" ? undefined : values.context,
    workers: values.workers,
    maxRetries: values["max-retries"],
    retryBaseDelayMs: values["retry-base-delay"],
    retryMaxDelayMs: values["retry-max-delay"],
    resyncPeriodMs: values["resync-period"],
    listPageSize: values["list-page-size"],
    watchList: values["watch-list"],
    watchTimeoutMs: values["watch-timeout"],
    watchStallTimeoutMs: values["watch-stall-timeout"],
    httpAddress: values["http-address"],
    httpPort: values["http-port"],
    logLevel: values["log-level"],
    logFormat: values["log-format"],
    logFormatGiven: given.has("log-format"),
    shutdownTimeoutMs: values["shutdown-timeout"],
    v8Flags: values["v8-flags"],
    v8FlagsAfterSync: values["v8-flags-after-sync"],
    namespaces,
    excludeNamespaces: values["exclude-namespaces"],
    deleteBarePods: values["delete-bare-pods"],
    limits: Object.freeze({
      deletionsPerMinute: values["max-deletions-per-minute"],
      outageDeletionsPerMinute: values["max-outage-deletions-per-minute"],
      deletionBurst: values["deletion-burst"],
      inflightPerNode: values["max-inflight-deletions-per-node"],
      inflightPerNamespace: values["max-inflight-deletions-per-namespace"],
    }),
    cniAgentGate: gateOn
      ? Object.freeze({
          minReadyMs: values["cni-agent-min-ready"],
          selector: agentSelector === "" ? undefined : agentSelector,
          namespaces: agentNamespaces,
        })
      : undefined,
    istioRepair:
      values["istio-repair"] === "auto" && rules.some((rule) => rule.name === ISTIO_RULE)
        ? Object.freeze({ namespace: agentNamespaceOf(agentNamespaces, ISTIO_RULE) })
        : undefined,
    startupTaint: startupTaintConfig(values, at, rules, { gateOn, nodeName: node }),
    loopBackoff: Object.freeze({ baseMs: values["loop-backoff"], maxMs: values["loop-backoff-max"] }),
    storm: Object.freeze({
      maxBrokenFraction: values["max-broken-fraction"],
      minBroken: values["storm-min-broken"],
      windowMs: values["storm-window"],
    }),
    leaderElection: electing
      ? Object.freeze({
          namespace: values["leader-election-namespace"] === "" ? undefined : values["leader-election-namespace"],
          id: values["leader-election-id"],
          leaseDurationMs: values["lease-duration"],
          renewDeadlineMs: values["renew-deadline"],
          retryPeriodMs: values["retry-period"],
        })
      : undefined,
    scan: Object.freeze({ output: values.output, repair: values.repair }),
    admissionPolicies: values["admission-policies"],
  });
}
