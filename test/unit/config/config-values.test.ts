// parseConfig: defaults, every flag through argv and through env, and flags beating env.

import { expect } from "chai";
import { type Config, parseConfig } from "../../../src/config/config.js";
import { envVarName, type FlagName, flagNames, flags } from "../../../src/config/flags.js";
import { describeFieldSelector } from "../../../src/config/selectors.js";
import { isAmbient, type ValidatorRule } from "../../../src/detect/rule.js";
import { commandFor } from "./command-for.js";

// A custom rule names no CNI agent, so with the readiness gate on (the default) it needs a selector.
const custom = {
  "custom-init-container": "my-validator",
  "custom-exit-codes": "7",
  "cni-agent-selector": "app=my-cni",
} as const;

type Case = {
  readonly flag: FlagName;
  readonly text: string;
  /** Other flags the case needs, e.g. the custom rule's init container. */
  readonly with?: Partial<Record<FlagName, string>>;
  readonly read: (config: Config) => unknown;
  readonly want: unknown;
};

const customRule = (config: Config) => config.rules.at(-1) as ValidatorRule | undefined;
const ambient = (config: Config) => config.rules.find(isAmbient);

const cases: readonly Case[] = [
  {
    flag: "startup-taint",
    text: "bootstrap-only",
    with: { preset: "istio,linkerd" },
    read: (c) => c.startupTaint,
    want: {
      mode: "bootstrap-only",
      keys: ["cni.istio.io/not-ready", "cni-repair.io/agent-not-ready"],
      notReadyAfterMs: 120_000,
      maxShare: 0.2,
    },
  },
  {
    flag: "startup-taint-keys",
    text: "example.com/cni-down,cni.istio.io/not-ready",
    with: { "startup-taint": "continuous" },
    read: (c) => c.startupTaint?.keys,
    want: ["example.com/cni-down", "cni.istio.io/not-ready"],
  },
  {
    flag: "startup-taint-not-ready-after",
    text: "45s",
    with: { "startup-taint": "continuous" },
    read: (c) => c.startupTaint?.notReadyAfterMs,
    want: 45_000,
  },
  {
    flag: "startup-taint-max-share",
    text: "0.5",
    with: { "startup-taint": "continuous" },
    read: (c) => c.startupTaint?.maxShare,
    want: 0.5,
  },
  { flag: "preset", text: "linkerd,istio", read: (c) => c.rules.map((r) => r.name), want: ["linkerd", "istio"] },
  {
    flag: "custom-init-container",
    text: "my-validator",
    with: { "custom-exit-codes": "7", "cni-agent-selector": "app=my-cni" },
    read: customRule,
    want: { name: "custom", initContainer: "my-validator", exitCodes: [7] },
  },
  {
    flag: "custom-exit-codes",
    text: "1, 2,255",
    with: custom,
    read: (c) => customRule(c)?.exitCodes,
    want: [1, 2, 255],
  },
  {
    flag: "custom-termination-message",
    text: "iptables missing",
    with: custom,
    read: (c) => customRule(c)?.messageContains,
    want: "iptables missing",
  },
  {
    flag: "custom-require-annotation",
    text: "example.com/injected=yes, really",
    with: custom,
    read: (c) => customRule(c)?.requiredAnnotation,
    want: { key: "example.com/injected", value: "yes, really" },
  },
  {
    flag: "custom-require-label",
    text: "mesh",
    with: custom,
    read: (c) => customRule(c)?.requiredLabel,
    want: { key: "mesh" },
  },
  { flag: "custom-rule-name", text: "acme-mesh", with: custom, read: (c) => customRule(c)?.name, want: "acme-mesh" },
  { flag: "mode", text: "label", read: (c) => c.mode, want: "label" },
  { flag: "label-key", text: "example.com/broken", read: (c) => c.label.key, want: "example.com/broken" },
  { flag: "label-value", text: "yes", read: (c) => c.label.value, want: "yes" },
  {
    flag: "label-selector",
    text: "app in (a, b),!legacy,tier!=db",
    read: (c) => c.scope.labelSelector,
    want: "app in (a, b),!legacy,tier!=db",
  },
  {
    flag: "field-selector",
    text: "status.phase!=Running",
    read: (c) => describeFieldSelector(c.scope),
    want: "status.phase!=Running",
  },
  {
    flag: "node-name",
    text: "node-1.example",
    read: (c) => [c.nodeName, describeFieldSelector(c.scope)],
    want: ["node-1.example", "spec.nodeName=node-1.example"],
  },
  { flag: "kubeconfig", text: "/etc/kube/config", read: (c) => c.kubeconfig, want: "/etc/kube/config" },
  { flag: "context", text: "prod", read: (c) => c.context, want: "prod" },
  { flag: "workers", text: "64", read: (c) => c.workers, want: 64 },
  { flag: "max-retries", text: "0", read: (c) => c.maxRetries, want: 0 },
  { flag: "retry-base-delay", text: "250ms", read: (c) => c.retryBaseDelayMs, want: 250 },
  { flag: "retry-max-delay", text: "1h", read: (c) => c.retryMaxDelayMs, want: 3_600_000 },
  { flag: "resync-period", text: "0s", read: (c) => c.resyncPeriodMs, want: 0 },
  { flag: "list-page-size", text: "10000", read: (c) => c.listPageSize, want: 10_000 },
  { flag: "watch-list", text: "false", read: (c) => c.watchList, want: false },
  { flag: "watch-timeout", text: "1m30s", read: (c) => c.watchTimeoutMs, want: 90_000 },
  { flag: "watch-stall-timeout", text: "1s", read: (c) => c.watchStallTimeoutMs, want: 1_000 },
  { flag: "http-address", text: "::1", read: (c) => c.httpAddress, want: "::1" },
  { flag: "http-address", text: "0.0.0.0", read: (c) => c.httpAddress, want: "0.0.0.0" },
  { flag: "http-address", text: "", read: (c) => c.httpAddress, want: "" },
  { flag: "http-port", text: "0", read: (c) => c.httpPort, want: 0 },
  { flag: "log-level", text: "debug", read: (c) => c.logLevel, want: "debug" },
  { flag: "log-format", text: "text", read: (c) => c.logFormat, want: "text" },
  { flag: "shutdown-timeout", text: "0s", read: (c) => c.shutdownTimeoutMs, want: 0 },
  { flag: "v8-flags", text: "--no-opt,--max-lazy=1", read: (c) => c.v8Flags, want: ["--no-opt", "--max-lazy=1"] },
  { flag: "v8-flags-after-sync", text: "--maglev", read: (c) => c.v8FlagsAfterSync, want: ["--maglev"] },
  {
    flag: "ambient-action",
    text: "delete",
    with: { preset: "istio-ambient" },
    read: (c) => ambient(c)?.action,
    want: "delete",
  },
  {
    flag: "ambient-enroll-grace",
    text: "2m",
    with: { preset: "istio-ambient" },
    read: (c) => ambient(c)?.enrollGraceMs,
    want: 120_000,
  },
  {
    flag: "ambient-excluded-namespaces",
    text: "kube-system,istio-system",
    with: { preset: "istio-ambient" },
    read: (c) => ambient(c)?.excludedNamespaces,
    want: ["kube-system", "istio-system"],
  },
  {
    flag: "ambient-pod-selector",
    text: "mesh=ambient",
    with: { preset: "istio-ambient" },
    read: (c) => ambient(c)?.podSelector,
    want: { key: "mesh", value: "ambient" },
  },
  {
    flag: "ambient-namespace-selector",
    text: "example.com/mesh=on",
    with: { preset: "istio-ambient" },
    read: (c) => ambient(c)?.namespaceSelector,
    want: { key: "example.com/mesh", value: "on" },
  },
  {
    flag: "ambient-opt-out",
    text: "mesh=off",
    with: { preset: "istio-ambient" },
    read: (c) => ambient(c)?.optOut,
    want: { key: "mesh", value: "off" },
  },
  {
    flag: "ztunnel-selector",
    text: "app=zt",
    with: { preset: "istio-ambient" },
    read: (c) => ambient(c)?.ztunnelSelector,
    want: "app=zt",
  },
  {
    flag: "ztunnel-namespace",
    text: "ambient",
    with: { preset: "istio-ambient" },
    read: (c) => ambient(c)?.ztunnelNamespace,
    want: "ambient",
  },
  { flag: "namespaces", text: "shop,blog", read: (c) => c.namespaces, want: ["shop", "blog"] },
  { flag: "exclude-namespaces", text: "kube-system", read: (c) => c.excludeNamespaces, want: ["kube-system"] },
  {
    flag: "admission-policies",
    text: "cni-repair-meshed-pods,cni-repair-own-node",
    read: (c) => c.admissionPolicies,
    want: ["cni-repair-meshed-pods", "cni-repair-own-node"],
  },
  { flag: "delete-bare-pods", text: "true", read: (c) => c.deleteBarePods, want: true },
  { flag: "max-deletions-per-minute", text: "0", read: (c) => c.limits.deletionsPerMinute, want: 0 },
  { flag: "deletion-burst", text: "3", read: (c) => c.limits.deletionBurst, want: 3 },
  {
    flag: "max-outage-deletions-per-minute",
    text: "0",
    read: (c) => c.limits.outageDeletionsPerMinute,
    want: 0,
  },
  { flag: "max-inflight-deletions-per-node", text: "2", read: (c) => c.limits.inflightPerNode, want: 2 },
  { flag: "max-inflight-deletions-per-namespace", text: "0", read: (c) => c.limits.inflightPerNamespace, want: 0 },
  { flag: "cni-agent-gate", text: "off", read: (c) => c.cniAgentGate, want: undefined },
  { flag: "cni-agent-min-ready", text: "0s", read: (c) => c.cniAgentGate?.minReadyMs, want: 0 },
  { flag: "cni-agent-selector", text: "app=cni,tier", read: (c) => c.cniAgentGate?.selector, want: "app=cni,tier" },
  {
    flag: "cni-agent-namespace",
    text: "istio-system",
    read: (c) => c.cniAgentGate?.namespaces,
    want: { all: "istio-system", byRule: {} },
  },
  { flag: "istio-repair", text: "ignore", read: (c) => c.istioRepair, want: undefined },
  { flag: "loop-backoff", text: "10s", read: (c) => c.loopBackoff.baseMs, want: 10_000 },
  { flag: "loop-backoff-max", text: "1h", read: (c) => c.loopBackoff.maxMs, want: 3_600_000 },
  { flag: "max-broken-fraction", text: "0.25", read: (c) => c.storm.maxBrokenFraction, want: 0.25 },
  { flag: "storm-min-broken", text: "8", read: (c) => c.storm.minBroken, want: 8 },
  { flag: "storm-window", text: "90s", read: (c) => c.storm.windowMs, want: 90_000 },
  { flag: "leader-elect", text: "false", read: (c) => c.leaderElection, want: undefined },
  {
    flag: "leader-election-namespace",
    text: "cni-repair",
    read: (c) => c.leaderElection?.namespace,
    want: "cni-repair",
  },
  {
    flag: "leader-election-id",
    text: "repair.example.com",
    read: (c) => c.leaderElection?.id,
    want: "repair.example.com",
  },
  { flag: "lease-duration", text: "30s", read: (c) => c.leaderElection?.leaseDurationMs, want: 30_000 },
  { flag: "renew-deadline", text: "5s", read: (c) => c.leaderElection?.renewDeadlineMs, want: 5_000 },
  { flag: "retry-period", text: "500ms", read: (c) => c.leaderElection?.retryPeriodMs, want: 500 },
  { flag: "output", text: "json", read: (c) => c.scan.output, want: "json" },
  { flag: "repair", text: "true", read: (c) => c.scan.repair, want: true },
];

const argvOf = (settings: Partial<Record<FlagName, string>>) =>
  Object.entries(settings).map(([name, text]) => `--${name}=${text}`);

const envOf = (settings: Partial<Record<FlagName, string>>) =>
  Object.fromEntries(Object.entries(settings).map(([name, text]) => [envVarName(name as FlagName), text]));

describe("config/parseConfig values", () => {
  it("has the documented defaults", () => {
    const { command, config } = parseConfig(["run"], {});
    expect(command).to.equal("run");
    expect(config).to.deep.equal({
      rules: [
        {
          name: "istio",
          initContainer: "istio-validation",
          exitCodes: [126],
          requiredAnnotation: { key: "sidecar.istio.io/status" },
          cniAgentSelector: "k8s-app=istio-cni-node",
          startupTaintKey: "cni.istio.io/not-ready",
        },
      ],
      mode: "delete",
      label: { key: "cni.istio.io/uninitialized", value: "true" },
      scope: {},
      nodeName: undefined,
      kubeconfig: undefined,
      context: undefined,
      workers: 4,
      maxRetries: 5,
      retryBaseDelayMs: 1_000,
      retryMaxDelayMs: 120_000,
      resyncPeriodMs: 300_000,
      listPageSize: 500,
      watchList: true,
      watchTimeoutMs: 300_000,
      watchStallTimeoutMs: 90_000,
      httpAddress: "",
      httpPort: 8080,
      logLevel: "info",
      logFormat: "json",
      logFormatGiven: false,
      v8Flags: [],
      v8FlagsAfterSync: [],
      shutdownTimeoutMs: 20_000,
      namespaces: [],
      excludeNamespaces: [],
      deleteBarePods: false,
      limits: {
        deletionsPerMinute: 60,
        outageDeletionsPerMinute: 600,
        deletionBurst: 10,
        inflightPerNode: 10,
        inflightPerNamespace: 20,
      },
      cniAgentGate: { minReadyMs: 10_000, selector: undefined, namespaces: { all: undefined, byRule: {} } },
      istioRepair: { namespace: undefined },
      startupTaint: undefined,
      loopBackoff: { baseMs: 60_000, maxMs: 1_800_000 },
      storm: { maxBrokenFraction: 0.5, minBroken: 5, windowMs: 120_000 },
      leaderElection: {
        namespace: undefined,
        id: "cni-repair",
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      },
      scan: { output: "table", repair: false },
      admissionPolicies: [],
    });
  });

  it("reads Istio's repair settings where its agent runs (any namespace) or in the istio rule's pinned one, only for the istio rule", () => {
    expect(parseConfig(["run"], {}).config.istioRepair).to.deep.equal({ namespace: undefined });
    expect(parseConfig(["run", "--cni-agent-namespace=kube-system"], {}).config.istioRepair).to.deep.equal({
      namespace: "kube-system",
    });
    const perRule = parseConfig(["run", "--preset=istio,linkerd", "--cni-agent-namespace=linkerd=linkerd-cni"], {});
    expect(perRule.config.istioRepair).to.deep.equal({ namespace: undefined });
    const both = parseConfig(
      ["run", "--preset=istio,linkerd", "--cni-agent-namespace=istio=kube-system,linkerd=linkerd-cni"],
      {},
    );
    expect(both.config.istioRepair).to.deep.equal({ namespace: "kube-system" });
    expect(both.config.cniAgentGate?.namespaces).to.deep.equal({
      all: undefined,
      byRule: { istio: "kube-system", linkerd: "linkerd-cni" },
    });
    expect(parseConfig(["run", "--preset=linkerd"], {}).config.istioRepair).to.equal(undefined);
    expect(parseConfig(["run"], { CNI_REPAIR_ISTIO_REPAIR: "ignore" }).config.istioRepair).to.equal(undefined);
    expect(() => parseConfig(["run", "--istio-repair=off"], {})).to.throw(/--istio-repair/);
  });

  it("turns the CNI agent gate and leader election off", () => {
    const { config } = parseConfig(["run", "--cni-agent-gate=off", "--leader-elect=false"], {});
    expect(config.cniAgentGate).to.equal(undefined);
    expect(config.leaderElection).to.equal(undefined);
  });

  it("filters namespaces on the server where a field selector can: one included, any excluded", () => {
    expect(describeFieldSelector(parseConfig(["run", "--namespaces=shop"], {}).config.scope)).to.equal(
      "metadata.namespace=shop",
    );
    expect(describeFieldSelector(parseConfig(["run", "--namespaces=shop,blog"], {}).config.scope)).to.equal("");
    expect(
      describeFieldSelector(
        parseConfig(["run", "--exclude-namespaces=kube-system,istio-system", "--node-name=n1"], {}).config.scope,
      ),
    ).to.equal("spec.nodeName=n1,metadata.namespace!=kube-system,metadata.namespace!=istio-system");
  });

  it("reads the scan command and its flags", () => {
    const { command, config } = parseConfig(["scan", "-o", "json", "--repair"], {});
    expect(command).to.equal("scan");
    expect(config.scan).to.deep.equal({ output: "json", repair: true });
  });

  it("returns a frozen config", () => {
    const { config } = parseConfig(["run"], {});
    expect(Object.isFrozen(config)).to.equal(true);
    expect(Object.isFrozen(config.rules)).to.equal(true);
  });

  it("covers every value flag with a case", () => {
    const covered = new Set(cases.map((c) => c.flag));
    const missing = flagNames.filter((name) => name !== "help" && name !== "version" && !covered.has(name));
    expect(missing).to.deep.equal([]);
  });

  for (const c of cases) {
    const settings = { ...c.with, [c.flag]: c.text };
    const command = commandFor(c.flag);
    it(`reads --${c.flag} from argv`, () => {
      expect(c.read(parseConfig([...command, ...argvOf(settings)], {}).config)).to.deep.equal(c.want);
    });
    // A boolean takes no separate value argument: `--repair true` would make "true" a command. A value that looks
    // like a flag (--v8-flags' --no-opt) needs the = form: read-args refuses it as a separate argument.
    if (flags[c.flag as FlagName].type !== "bool" && !c.text.startsWith("-")) {
      it(`reads --${c.flag} from argv as two arguments`, () => {
        const argv = [...command, ...argvOf(c.with ?? {}), `--${c.flag}`, c.text];
        expect(c.read(parseConfig(argv, {}).config)).to.deep.equal(c.want);
      });
    }
    it(`reads ${envVarName(c.flag)} from env`, () => {
      expect(c.read(parseConfig(command, envOf(settings)).config)).to.deep.equal(c.want);
    });
  }

  it("takes a flag and its env var that agree, however each is written", () => {
    const { config } = parseConfig(["run", "--mode=report", "--workers", "2", "--cni-agent-min-ready=10s"], {
      CNI_REPAIR_MODE: "report",
      CNI_REPAIR_WORKERS: "02",
      CNI_REPAIR_CNI_AGENT_MIN_READY: "10000ms",
      CNI_REPAIR_LOG_LEVEL: "warn",
    });
    expect([config.mode, config.workers, config.cniAgentGate?.minReadyMs, config.logLevel]).to.deep.equal([
      "report",
      2,
      10_000,
      "warn",
    ]);
  });

  it("uses the last of a repeated flag", () => {
    expect(parseConfig(["run", "--workers=2", "--workers=3"], {}).config.workers).to.equal(3);
  });

  it("ignores unrelated env vars and accepts the internal CNI_REPAIR_* ones", () => {
    const env = { PATH: "/bin", CNI_REPAIR_IN_CLUSTER_ROOT: "/tmp/x", CNI_REPAIR_CONTROLPLANE_BIN: "/opt/bin" };
    expect(parseConfig(["run"], env).command).to.equal("run");
  });

  it("puts presets first, in the order given, then the custom rule", () => {
    const { config } = parseConfig(["run", "--preset=linkerd,istio", ...argvOf(custom)], {});
    expect(config.rules.map((r) => r.name)).to.deep.equal(["linkerd", "istio", "custom"]);
  });

  it("allows an empty preset list with a custom rule", () => {
    const { config } = parseConfig(["run", "--preset=", ...argvOf(custom)], {});
    expect(config.rules.map((r) => r.name)).to.deep.equal(["custom"]);
    expect(parseConfig(["run"], { CNI_REPAIR_PRESET: "", ...envOf(custom) }).config.rules).to.have.length(1);
  });

  it("joins --field-selector and --node-name, escaping nothing a node name can hold", () => {
    const { config } = parseConfig(["run", "--field-selector=status.phase=Pending", "--node-name=n1"], {});
    expect(describeFieldSelector(config.scope)).to.equal("status.phase=Pending,spec.nodeName=n1");
  });

  it("allows base delay equal to max delay", () => {
    const { config } = parseConfig(["run", "--retry-base-delay=5s", "--retry-max-delay=5s"], {});
    expect([config.retryBaseDelayMs, config.retryMaxDelayMs]).to.deep.equal([5_000, 5_000]);
  });

  it("accepts a hostname as --http-address", () => {
    expect(parseConfig(["run", "--http-address=localhost"], {}).config.httpAddress).to.equal("localhost");
  });
});

describe("config/parseConfig booleans and commands", () => {
  const commandOf = (argv: string[], env: Record<string, string> = {}) => parseConfig(argv, env).command;

  it("prints the overview bare, and runs only with run, wherever run appears", () => {
    expect(parseConfig([], {})).to.deep.include({ command: "help" });
    expect(parseConfig([], {}).helpFor).to.equal(undefined);
    // A broken environment does not stop the bare help either.
    expect(commandOf([], { CNI_REPAIR_BOGUS: "1", CNI_REPAIR_MODE: "delete" })).to.equal("help");
    expect(commandOf(["run"])).to.equal("run");
    expect(commandOf(["run"])).to.equal("run");
    expect(commandOf(["--mode=report", "run", "--workers=2"])).to.equal("run");
  });

  it("prints help for --help, -h and --help=true", () => {
    for (const argv of [["--help"], ["-h"], ["--help=true"], ["--help=1"], ["run", "--help"]]) {
      expect(commandOf(argv), argv.join(" ")).to.equal("help");
    }
  });

  it("treats --help=false and --help=0 as not asking for help", () => {
    expect(commandOf(["run", "--help=false"])).to.equal("run");
    expect(commandOf(["scan", "--help=0"])).to.equal("scan");
  });

  it("help [command] is the overview or that command's help", () => {
    expect(parseConfig(["help"], {})).to.deep.include({ command: "help" });
    expect(parseConfig(["help"], {}).helpFor).to.equal(undefined);
    for (const topic of ["run", "scan", "explain", "version"]) {
      expect(parseConfig(["help", topic], {}), topic).to.deep.include({ command: "help", helpFor: topic });
    }
    expect(parseConfig(["help", "scan", "--help"], {}).helpFor).to.equal("scan");
  });

  it("prints the version for --version; help wins over version", () => {
    expect(commandOf(["--version"])).to.equal("version");
    expect(commandOf(["--version", "--help"])).to.equal("help");
  });

  it("answers help and version even when the environment is broken", () => {
    const { command, config } = parseConfig(["--help"], { CNI_REPAIR_MODE: "bogus" });
    expect(command).to.equal("help");
    expect(config.mode).to.equal("delete");
  });

  it("has no env var for --help or --version", () => {
    expect(envVarName("help")).to.equal(undefined);
    expect(envVarName("version")).to.equal(undefined);
  });

  it("treats args after -- as positionals", () => {
    expect(commandOf(["--", "run"])).to.equal("run");
  });
});
