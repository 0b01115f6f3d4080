// The one table of every cni-repair flag: parsing, env var names and --help are all generated from it.

import { isIP } from "node:net";
import { GENERIC_STARTUP_TAINT_KEY, isPresetName, PRESETS, type Presets, presetNames } from "../detect/presets.js";
import type { Marker, Rule } from "../detect/rule.js";
import { parseAgentNamespaces } from "./agent-namespaces.js";
import { formatDuration } from "./duration.js";
import {
  boolFlag,
  durationFlag,
  enumFlag,
  type Flag,
  fail,
  fractionFlag,
  intFlag,
  listFlag,
  namespaceListFlag,
  ok,
  type Parsed,
  stringFlag,
} from "./flag-kinds.js";
import { parseMarker } from "./markers.js";
import {
  isDnsLabel,
  isDnsSubdomain,
  isHostname,
  isLabelValue,
  isQualifiedName,
  labelValueExpectation,
  qualifiedNameExpectation,
} from "./names.js";
import { fieldSelectorProblem, labelSelectorProblem } from "./selectors.js";
import { isV8Flag } from "./v8-flag-names.js";

/** Turns a predicate into a parser that keeps the text. */
const check =
  (test: (text: string) => boolean, expected: string) =>
  (text: string): Parsed<string> =>
    test(text) ? ok(text) : fail(expected);

/** Wraps a "what is wrong" function into a parser that keeps the text. */
const problems =
  (problem: (text: string) => string | undefined) =>
  (text: string): Parsed<string> => {
    const found = problem(text);
    return found === undefined ? ok(text) : fail(`malformed selector: ${found}`);
  };

const optional = (test: (text: string) => boolean) => (text: string) => text === "" || test(text);

// Canonical decimal only: "007" or "+1" in a list of exit codes is more likely a mistake than intent.
const exitCode = (text: string): Parsed<number> =>
  /^[1-9]\d{0,2}$/.test(text) && Number(text) <= 255
    ? ok(Number(text))
    : fail(`expected integers 1-255, got ${JSON.stringify(text)}`);

/** One V8 flag as node takes it: --name or --name=value (no spaces: setFlagsFromString splits on them). */
const v8Flag = (text: string): Parsed<string> => {
  if (!/^--[a-z][a-z0-9_-]*(=\S+)?$/.test(text))
    return fail(`expected V8 flags like --no-opt, got ${JSON.stringify(text)}`);
  return isV8Flag(text) ? ok(text) : fail(`V8 has no flag ${text} (node --v8-options lists them)`);
};

/** key=value with a qualified-name key and a label value: the ambient selectors compare values. */
const keyValueLabel = (text: string): Parsed<Required<Marker>> => {
  const parsed = parseMarker(text, "label");
  if (!parsed.ok) return parsed;
  const marker = parsed.value;
  return marker?.value === undefined ? fail("expected key=value") : ok({ key: marker.key, value: marker.value });
};

/** A preset's name to its rule, from the presets the table is built from. */
const presetIn =
  (presets: Presets) =>
  (name: string): Parsed<Rule> =>
    isPresetName(name)
      ? ok(presets[name])
      : fail(`unknown preset ${JSON.stringify(name)}, expected ${presetNames.join(", ")}`);

/** A key=value selector as the flag takes it. */
const markerText = (marker: Required<Marker>): string => `${marker.key}=${marker.value}`;

/** "istio k8s-app=istio-cni-node, ...": each preset's own CNI agent selector, for --help. */
const agentSelectors = (presets: Presets): string =>
  presetNames
    .flatMap((name) => {
      const selector = presets[name].cniAgentSelector;
      return selector === undefined ? [] : [`${name} ${selector}`];
    })
    .join(", ");

/** "istio cni.istio.io/not-ready, ..., custom cni-repair.io/agent-not-ready": each rule's own key, for --help. */
const startupTaintKeys = (presets: Presets): string =>
  [
    ...presetNames.map((name) => `${name} ${presets[name].startupTaintKey ?? GENERIC_STARTUP_TAINT_KEY}`),
    `custom ${GENERIC_STARTUP_TAINT_KEY}`,
  ].join(", ");

// Who accepts what. Shared settings (connection, detection, actions, guards, logs) mean the same to run, scan and
// explain: scan and explain judge pods exactly as run would.
const SHARED = ["run", "scan", "explain"] as const;
const RUN = ["run"] as const;
// The controller's workers and retries also make scan --repair's one pass.
const RUN_AND_SCAN = ["run", "scan"] as const;
const SCAN = ["scan"] as const;
const ONE_SHOT = ["scan", "explain"] as const;
const EVERY = ["run", "scan", "explain", "version"] as const;

const dnsLabelExpectation = "expected a DNS label: ≤63 chars of [a-z0-9-], starting and ending alphanumeric";

/**
 * The table, built from the presets: the flags that tune a preset take its values as their defaults, so the preset
 * is the one source of each (tests build it from changed presets to prove it).
 */
export function flagTable(presets: Presets) {
  const ambient = presets["istio-ambient"];
  return {
    preset: listFlag({
      group: "Detection",
      commands: SHARED,
      default: "istio",
      item: presetIn(presets),
      help: `Built-in rules to apply, comma-separated: ${presetNames.join(", ")}. Empty (--preset=) only with a custom rule.`,
    }),
    "custom-init-container": stringFlag({
      group: "Detection",
      commands: SHARED,
      parse: check(optional(isDnsLabel), dnsLabelExpectation),
      valueName: "<name>",
      help: "Init container of a custom rule; setting it enables the rule.",
    }),
    "custom-exit-codes": listFlag({
      group: "Detection",
      commands: SHARED,
      default: "",
      item: exitCode,
      help: "Custom rule: comma-separated exit codes (1-255) meaning traffic redirection is missing. Required with the custom rule.",
    }),
    "custom-termination-message": stringFlag({
      group: "Detection",
      commands: SHARED,
      valueName: "<text>",
      help: "Custom rule, optional: the init container's termination message must contain this text.",
    }),
    "custom-require-annotation": stringFlag({
      group: "Detection",
      commands: SHARED,
      parse: (text) => parseMarker(text, "annotation"),
      valueName: "<key[=value]>",
      help: "Custom rule, optional: the pod must carry this annotation (with this value, if given).",
    }),
    "custom-require-label": stringFlag({
      group: "Detection",
      commands: SHARED,
      parse: (text) => parseMarker(text, "label"),
      valueName: "<key[=value]>",
      help: "Custom rule, optional: the pod must carry this label (with this value, if given).",
    }),
    "custom-rule-name": stringFlag({
      group: "Detection",
      commands: SHARED,
      default: "custom",
      parse: check(isDnsLabel, dnsLabelExpectation),
      valueName: "<name>",
      help: "Custom rule: its name in metrics and logs; must differ from the presets in use.",
    }),
    mode: enumFlag(["delete", "label", "report"], {
      group: "Actions",
      commands: SHARED,
      default: "delete",
      help:
        "What to do with a broken pod: delete it so its owner recreates it, label it, or only report it. The Helm " +
        "chart's mode sets it with the workload: cluster and per-node run delete, label-only label, dry-run report.",
    }),
    "label-key": stringFlag({
      group: "Actions",
      commands: SHARED,
      default: "cni.istio.io/uninitialized",
      parse: check(isQualifiedName, qualifiedNameExpectation),
      valueName: "<key>",
      help: "Label mode: the label key put on broken pods.",
    }),
    "label-value": stringFlag({
      group: "Actions",
      commands: SHARED,
      default: "true",
      parse: check(isLabelValue, labelValueExpectation),
      valueName: "<value>",
      help: "Label mode: the label value put on broken pods.",
    }),
    "label-selector": stringFlag({
      group: "Detection",
      commands: SHARED,
      parse: problems(labelSelectorProblem),
      valueName: "<selector>",
      help: "Only watch pods matching this label selector (k, !k, k=v, k!=v, k in (a,b), k notin (a,b)).",
    }),
    "field-selector": stringFlag({
      group: "Detection",
      commands: SHARED,
      parse: problems(fieldSelectorProblem),
      valueName: "<selector>",
      help: "Only watch pods matching this field selector (path=value, path!=value).",
    }),
    "node-name": stringFlag({
      group: "Detection",
      commands: SHARED,
      parse: check(optional(isDnsSubdomain), "expected a node name (DNS subdomain)"),
      valueName: "<node>",
      help: "Only watch pods on this node (adds spec.nodeName=<node> to the field selector); for per-node deployment.",
    }),
    kubeconfig: stringFlag({
      group: "Connection",
      commands: SHARED,
      valueName: "<path>",
      help: "Kubeconfig file; empty leaves the choice to the client's default resolution.",
    }),
    context: stringFlag({
      group: "Connection",
      commands: SHARED,
      valueName: "<name>",
      help: "Kubeconfig context to use; empty means the current context.",
    }),
    workers: intFlag({
      group: "Controller",
      commands: RUN_AND_SCAN,
      default: 4,
      min: 1,
      max: 64,
      help: "Pods reconciled concurrently.",
    }),
    "max-retries": intFlag({
      group: "Controller",
      commands: RUN_AND_SCAN,
      default: 5,
      min: 0,
      max: 100,
      help: "Retries per pod after a failed reconcile before giving up until its next change.",
    }),
    "retry-base-delay": durationFlag({
      group: "Controller",
      commands: RUN_AND_SCAN,
      default: "1s",
      min: 1,
      help: "First retry delay; it doubles per retry up to --retry-max-delay.",
    }),
    "retry-max-delay": durationFlag({
      group: "Controller",
      commands: RUN_AND_SCAN,
      default: "2m",
      min: 1,
      help: "Longest retry delay; at least --retry-base-delay.",
    }),
    "resync-period": durationFlag({
      group: "Controller",
      commands: RUN,
      default: "5m",
      min: 1_000,
      zeroMeansOff: true,
      help: "How often every cached pod is checked again even without a change; 0s turns it off.",
    }),
    "list-page-size": intFlag({
      group: "Connection",
      commands: SHARED,
      default: 500,
      min: 1,
      max: 10_000,
      help: "Pods per page when listing.",
    }),
    "watch-list": boolFlag({
      group: "Connection",
      commands: SHARED,
      default: true,
      help: "Take each initial list (pods, agent pods, nodes, Istio's settings) as a stream of watch events (WatchList, sendInitialEvents) where the API server offers it, falling back to pages; false: always pages.",
    }),
    "watch-timeout": durationFlag({
      group: "Connection",
      commands: SHARED,
      default: "5m",
      min: 10_000,
      wholeSeconds: true,
      help: "Server-side timeout of each watch request (randomised up to twice this), after which the watch is restarted; a streamed initial list, which goes on as the watch, gets 30-60m so its initial events fit.",
    }),
    "watch-stall-timeout": durationFlag({
      group: "Connection",
      commands: SHARED,
      default: "90s",
      min: 1_000,
      help:
        "A watch with no byte (event or bookmark; the API server sends a bookmark about once a minute) for this long " +
        "is dead and restarted from where it was, with a warning (a quiet watch left by a streamed list, which gets " +
        "no bookmark, is resumed without one); /healthz fails once no answer at all has come from the API server for " +
        "twice this long.",
    }),
    "http-address": stringFlag({
      group: "Observability",
      commands: RUN,
      default: "",
      parse: check(
        optional((text) => isIP(text) !== 0 || isHostname(text)),
        "expected an IP address or hostname, or empty for every address",
      ),
      valueName: "<address>",
      help:
        "Address of the metrics and health HTTP server. Empty (the default): every address, IPv6 and IPv4 (IPv4 only " +
        "where the node has no IPv6), so the kubelet's probes reach it on a single-stack IPv6 cluster too; 0.0.0.0 " +
        "listens on IPv4 only.",
    }),
    "http-port": intFlag({
      group: "Observability",
      commands: RUN,
      default: 8080,
      min: 0,
      max: 65_535,
      what: "a port",
      help: "Port of the metrics and health HTTP server; 0 picks a free port.",
    }),
    "ambient-action": enumFlag(["report", "delete"], {
      group: "Actions",
      commands: SHARED,
      default: ambient.action,
      help: "istio-ambient preset: what delete mode does with an unenrolled pod (the node agent retries enrolment itself).",
    }),
    "ambient-enroll-grace": durationFlag({
      group: "Detection",
      commands: SHARED,
      default: formatDuration(ambient.enrollGraceMs),
      min: 1_000,
      help: "istio-ambient preset: how long a pod may stay unenrolled after it could first have been (sandbox set up, entered ambient scope, node agents Ready) before it counts as broken.",
    }),
    "ambient-excluded-namespaces": namespaceListFlag({
      group: "Detection",
      commands: SHARED,
      default: ambient.excludedNamespaces.join(","),
      help: "istio-ambient preset: namespaces never in ambient scope.",
    }),
    "ambient-pod-selector": stringFlag<Required<Marker>>({
      group: "Detection",
      commands: SHARED,
      default: markerText(ambient.podSelector),
      parse: keyValueLabel,
      valueName: "<key=value>",
      help: "istio-ambient preset: a pod with this label is in ambient scope.",
    }),
    "ambient-namespace-selector": stringFlag<Required<Marker>>({
      group: "Detection",
      commands: SHARED,
      default: markerText(ambient.namespaceSelector),
      parse: keyValueLabel,
      valueName: "<key=value>",
      help: "istio-ambient preset: pods in a namespace with this label are in ambient scope (unless they opt out).",
    }),
    "ambient-opt-out": stringFlag<Required<Marker>>({
      group: "Detection",
      commands: SHARED,
      default: markerText(ambient.optOut),
      parse: keyValueLabel,
      valueName: "<key=value>",
      help: "istio-ambient preset: a pod with this label stays out of ambient scope even in an ambient namespace.",
    }),
    "ztunnel-selector": stringFlag({
      group: "Guards",
      commands: SHARED,
      default: ambient.ztunnelSelector,
      parse: problems(labelSelectorProblem),
      valueName: "<selector>",
      help: "istio-ambient preset: label selector of the ztunnel pods that must be Ready on a node before deleting there.",
    }),
    "ztunnel-namespace": stringFlag({
      group: "Guards",
      commands: SHARED,
      default: ambient.ztunnelNamespace,
      parse: check(optional(isDnsLabel), dnsLabelExpectation),
      valueName: "<namespace>",
      help: "istio-ambient preset: namespace of the ztunnel pods; empty looks in all namespaces.",
    }),
    namespaces: namespaceListFlag({
      group: "Detection",
      commands: SHARED,
      default: "",
      help: "Only act in these namespaces (comma-separated); empty means all.",
    }),
    "exclude-namespaces": namespaceListFlag({
      group: "Detection",
      commands: SHARED,
      default: "",
      help: "Never act in these namespaces (comma-separated).",
    }),
    "delete-bare-pods": boolFlag({
      group: "Actions",
      commands: SHARED,
      help: "Also delete broken pods without a controlling owner; by default they are labelled instead, as nothing would recreate them.",
    }),
    "max-deletions-per-minute": intFlag({
      group: "Guards",
      commands: SHARED,
      default: 60,
      min: 0,
      max: 100_000,
      help: "Deletions allowed per minute across the cluster (token bucket); pods over the limit are held. 0: no limit.",
    }),
    "max-outage-deletions-per-minute": intFlag({
      group: "Guards",
      commands: SHARED,
      default: 600,
      min: 0,
      max: 100_000,
      help: "Deletions allowed per minute across the cluster of pods whose breakage a CNI agent outage explains (broken while their node's agent was not Ready, or just after), instead of --max-deletions-per-minute; the in-flight caps and the agent gate still apply. 0: no limit.",
    }),
    "deletion-burst": intFlag({
      group: "Guards",
      commands: SHARED,
      default: 10,
      min: 1,
      max: 100_000,
      help: "Deletions allowed at once before --max-deletions-per-minute paces them.",
    }),
    "max-inflight-deletions-per-node": intFlag({
      group: "Guards",
      commands: SHARED,
      default: 10,
      min: 0,
      max: 100_000,
      help: "Pods deleted by us and still terminating, per node, before more are held. 0: no limit.",
    }),
    "max-inflight-deletions-per-namespace": intFlag({
      group: "Guards",
      commands: SHARED,
      default: 20,
      min: 0,
      max: 100_000,
      help: "Pods deleted by us and still terminating, per namespace, before more are held. 0: no limit.",
    }),
    "cni-agent-gate": enumFlag(["on", "off"], {
      group: "Guards",
      commands: SHARED,
      default: "on",
      help: "Delete a pod only when its node's CNI agent pod is Ready (for --cni-agent-min-ready).",
    }),
    "cni-agent-min-ready": durationFlag({
      group: "Guards",
      commands: SHARED,
      default: "10s",
      min: 0,
      help: "How long the node's CNI agent (and ztunnel, for istio-ambient) must have been Ready before pods on the node are acted on.",
    }),
    "cni-agent-selector": stringFlag({
      group: "Guards",
      commands: SHARED,
      parse: problems(labelSelectorProblem),
      valueName: "<selector>",
      help: `Label selector of the CNI agent pods, for every rule (defaults: ${agentSelectors(presets)}).`,
    }),
    "cni-agent-namespace": stringFlag({
      group: "Guards",
      commands: SHARED,
      parse: parseAgentNamespaces,
      valueName: "<namespace|rule=namespace,...>",
      help: "Namespace of the CNI agent pods: one for every rule, or per rule (istio=kube-system,linkerd=linkerd-cni; a bare namespace beside them is for the rules not named); empty looks in all namespaces. The istio rule's also pins where Istio's repair settings are read.",
    }),
    "istio-repair": enumFlag(["auto", "ignore"], {
      group: "Guards",
      commands: SHARED,
      default: "auto",
      help: "istio preset: read Istio's own repair settings (ConfigMap istio-cni-config and DaemonSet istio-cni-node, in the namespace where Istio's CNI agent runs, found in any namespace unless --cni-agent-namespace pins the istio rule's) and leave Istio's pods to it: held while its in-place repair may still fix them (also while its agents run and the settings are missing or unreadable: mode unknown), deleted as its fallback once a validator run that started after Istio had its chance failed too; held while Istio deletes or labels them itself. ignore: act as if Istio did not repair.",
    }),
    "startup-taint": enumFlag(["off", "bootstrap-only", "continuous"], {
      group: "Startup taints",
      commands: SHARED,
      default: "off",
      help: "Manage the nodes' startup taint: remove it once every CNI agent on the node has been Ready for --cni-agent-min-ready (bootstrap-only), and also add it back (NoSchedule) while an agent stays NotReady (continuous). --mode=report only counts.",
    }),
    "startup-taint-keys": listFlag({
      group: "Startup taints",
      commands: SHARED,
      default: "",
      item: (text) =>
        isQualifiedName(text)
          ? ok(text)
          : fail(`expected taint keys, ${qualifiedNameExpectation}; got ${JSON.stringify(text)}`),
      help: `Startup taint keys managed, comma-separated; only these are ever touched. Empty: per rule, ${startupTaintKeys(presets)}.`,
    }),
    "startup-taint-not-ready-after": durationFlag({
      group: "Startup taints",
      commands: RUN,
      default: "2m",
      min: 1_000,
      help: "continuous: how long a node's CNI agent must stay NotReady (as observed) before the node is tainted again.",
    }),
    "startup-taint-max-share": fractionFlag({
      group: "Startup taints",
      commands: RUN,
      default: "0.2",
      help: "continuous: the largest share of nodes that may carry a startup taint at once (rounded down), so an agent outage everywhere never makes the whole cluster unschedulable.",
    }),
    "loop-backoff": durationFlag({
      group: "Guards",
      commands: SHARED,
      default: "1m",
      min: 1_000,
      help: "When a pod we deleted is replaced by a broken one on the same node, wait this long before the next delete; doubles per repeat.",
    }),
    "loop-backoff-max": durationFlag({
      group: "Guards",
      commands: SHARED,
      default: "30m",
      min: 1_000,
      help: "Longest wait between repeated deletions for one owner on one node.",
    }),
    "max-broken-fraction": fractionFlag({
      group: "Guards",
      commands: SHARED,
      default: "0.5",
      help: "Stop deleting on a node (or in the cluster) when more than this fraction of its meshed pods broke without a CNI agent outage to explain it.",
    }),
    "storm-window": durationFlag({
      group: "Guards",
      commands: SHARED,
      default: "2m",
      min: 0,
      help: "A pod we deleted counts as broken for the storm breaker this long after the delete (and until its replacement is judged), so a wave spread over this window is one wave.",
    }),
    "storm-min-broken": intFlag({
      group: "Guards",
      commands: SHARED,
      default: 5,
      min: 1,
      max: 1_000_000,
      help: "The storm breaker opens only with at least this many broken pods on the node (or in the cluster).",
    }),
    "admission-policies": listFlag({
      group: "Guards",
      commands: RUN,
      default: "",
      item: (text) =>
        isDnsSubdomain(text) ? ok(text) : fail(`expected policy names (DNS subdomains), got ${JSON.stringify(text)}`),
      help: "ValidatingAdmissionPolicies (each with a binding of the same name) that limit what this identity may delete or relabel; the startup check warns when one is missing. The Helm chart sets its own. Empty: warns that nothing but RBAC limits this identity.",
    }),
    "leader-elect": boolFlag({
      group: "Leader election",
      commands: RUN,
      default: true,
      help: "Elect one active replica with a Lease; turn off for the per-node DaemonSet or a single instance.",
    }),
    "leader-election-namespace": stringFlag({
      group: "Leader election",
      commands: RUN,
      parse: check(optional(isDnsLabel), dnsLabelExpectation),
      valueName: "<namespace>",
      help: "Namespace of the Lease; empty: POD_NAMESPACE, else the current context's namespace (the kubeconfig's, or the service account's in-cluster), else default.",
    }),
    "leader-election-id": stringFlag({
      group: "Leader election",
      commands: RUN,
      default: "cni-repair",
      parse: check(isDnsSubdomain, "expected a Lease name (DNS subdomain)"),
      valueName: "<name>",
      help: "Name of the Lease.",
    }),
    "lease-duration": durationFlag({
      group: "Leader election",
      commands: RUN,
      default: "15s",
      min: 1_000,
      help: "How long followers wait after the last renewal they saw before taking over.",
    }),
    "renew-deadline": durationFlag({
      group: "Leader election",
      commands: RUN,
      default: "10s",
      min: 1_000,
      help: "How long the leader keeps trying to renew before it stops acting; less than --lease-duration.",
    }),
    "retry-period": durationFlag({
      group: "Leader election",
      commands: RUN,
      default: "2s",
      min: 100,
      help: "How often the Lease is renewed or its acquisition retried; less than --renew-deadline.",
    }),
    output: enumFlag(["table", "json", "yaml"], {
      group: "Output",
      commands: ONE_SHOT,
      short: "o",
      default: "table",
      help: "table for people; json or yaml (the same structure) for scripts.",
    }),
    repair: boolFlag({
      group: "Actions",
      commands: SCAN,
      help: "Make one pass of repairs under every guard (after the permission self-check), print the results, then exit.",
    }),
    "log-level": enumFlag(["error", "warn", "info", "debug"], {
      group: "Observability",
      commands: SHARED,
      default: "info",
      help: "Least severe level logged.",
    }),
    "log-format": enumFlag(["json", "text"], {
      group: "Observability",
      commands: SHARED,
      default: "json",
      help: "Log line format.",
    }),
    "v8-flags": listFlag({
      group: "Controller",
      commands: RUN,
      default: "",
      item: v8Flag,
      help:
        "V8 flags (comma-separated, e.g. --no-opt,--no-maglev) set once the controller's modules are loaded. The " +
        "same flags given to node itself would make V8 refuse Node's built-in code cache and the image's code " +
        "cache (both are checked against V8's flags), so every start would compile those modules afresh.",
    }),
    "v8-flags-after-sync": listFlag({
      group: "Controller",
      commands: RUN,
      default: "",
      item: v8Flag,
      help:
        "V8 flags (comma-separated, e.g. --maglev) set once the caches have synced, after --v8-flags: the " +
        "start-up runs without them and the watch events and repairs with them (an optimising compiler, say, " +
        "then compiles only what each event runs, not the start-up's code).",
    }),
    "shutdown-timeout": durationFlag({
      group: "Controller",
      commands: RUN,
      default: "20s",
      min: 0,
      help: "On SIGTERM, how long in-flight actions and their queued Events may take before exiting anyway.",
    }),
    help: boolFlag({ group: "General", commands: EVERY, short: "h", env: false, help: "Print this help and exit." }),
    version: boolFlag({ group: "General", commands: EVERY, env: false, help: "Print the version and exit." }),
  } as const;
}

export const flags = flagTable(PRESETS);
export type FlagTable = typeof flags;

export type FlagName = keyof typeof flags;
export type FlagValue<N extends FlagName> = FlagTable[N] extends Flag<infer T> ? T : never;
/** Every flag's typed value, keyed by flag name. */
export type FlagValues = { readonly [N in FlagName]: FlagValue<N> };

export const flagNames = Object.keys(flags) as readonly FlagName[];

export function isFlagName(name: string): name is FlagName {
  return Object.hasOwn(flags, name);
}

/** `--max-retries` → `CNI_REPAIR_MAX_RETRIES`; undefined for the flags that have no env var. */
export function envVarName(name: FlagName): string | undefined {
  return flags[name].env ? `CNI_REPAIR_${name.toUpperCase().replaceAll("-", "_")}` : undefined;
}
