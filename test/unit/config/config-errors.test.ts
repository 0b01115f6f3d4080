// parseConfig rejects bad input with a ConfigError naming the flag (or env var) and the bad text.

import { expect } from "chai";
import { parseConfig } from "../../../src/config/config.js";
import { ConfigError } from "../../../src/config/config-error.js";
import { commandFor } from "./command-for.js";

function errorOf(argv: string[], env: Record<string, string> = {}): ConfigError {
  try {
    parseConfig(argv, env);
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`parseConfig(${JSON.stringify(argv)}, ${JSON.stringify(env)}) did not throw`);
}

const custom = ["--custom-init-container=v", "--custom-exit-codes=1"];

/** [flag, bad text, extra argv the case needs, text the message must also contain] */
const badValues: readonly (readonly [string, string, string[]?, string?])[] = [
  ["preset", "bogus", [], "expected istio, linkerd"],
  ["preset", "istio,bogus", [], 'unknown preset "bogus"'],
  ["preset", "istio,,linkerd"],
  ["preset", "istio,istio", [], "twice"],
  ["preset", "", [], "at least one"],
  ["mode", "remove", [], "expected one of delete, label, report"],
  ["custom-exit-codes", "0", ["--custom-init-container=v"], "1-255"],
  ["custom-exit-codes", "256", ["--custom-init-container=v"], "1-255"],
  ["custom-exit-codes", "abc", ["--custom-init-container=v"], "1-255"],
  ["custom-exit-codes", "1,-2", ["--custom-init-container=v"]],
  ["custom-exit-codes", "", ["--custom-init-container=v"], "at least one exit code"],
  ["custom-init-container", "Bad_Name", ["--custom-exit-codes=1"], "DNS label"],
  ["custom-rule-name", "Custom", custom],
  ["custom-rule-name", "istio", custom, "preset istio already uses"],
  ["custom-require-label", "bad key", custom, "qualified name"],
  ["custom-require-label", "k=bad value", custom, "label value"],
  ["custom-require-label", `k=${"a".repeat(64)}`, custom],
  ["custom-require-annotation", "-bad", custom],
  ["custom-require-annotation", "a/b/c", custom],
  ["custom-require-annotation", `${"a".repeat(64)}`, custom],
  ["label-key", "UPPER.example/x", [], "qualified name"],
  ["label-key", "", []],
  ["label-value", "-x", [], "label value"],
  ["label-selector", "app in (a,b", [], "malformed selector"],
  ["label-selector", "a,,b"],
  ["label-selector", "a b"],
  ["label-selector", "app=x y"],
  ["label-selector", "app in ()"],
  ["label-selector", "bad key=v"],
  ["label-selector", "!"],
  ["label-selector", "a==b==c"],
  ["field-selector", "spec.nodeName", [], "malformed selector"],
  ["field-selector", "=x"],
  ["field-selector", "a=b,"],
  ["field-selector", "spec nodeName=x"],
  ["field-selector", "a=b=c"],
  ["field-selector", "a=\\x"],
  ["node-name", "Node_1", [], "DNS subdomain"],
  ["workers", "0", [], "expected an integer 1-64"],
  ["workers", "65"],
  ["workers", "four"],
  ["workers", "1.5"],
  ["workers", "-1"],
  ["workers", ""],
  ["max-retries", "101", [], "0-100"],
  ["list-page-size", "10001", [], "1-10000"],
  ["http-port", "99999", [], "expected a port 0-65535"],
  ["http-port", "-1"],
  ["http-address", "not an address!", [], "IP address or hostname"],
  ["http-address", "[::1]"],
  ["log-level", "trace", [], "error, warn, info, debug"],
  ["log-format", "xml", [], "json, text"],
  ["v8-flags", "no-opt", [], "expected V8 flags like --no-opt"],
  ["v8-flags", "--max-lazy 1"],
  ["v8-flags", "--no-opt,--no-such-v8-flag", [], "V8 has no flag --no-such-v8-flag (node --v8-options lists them)"],
  ["v8-flags-after-sync", "maglev", [], "expected V8 flags like --no-opt"],
  [
    "v8-flags-after-sync",
    "--maglev,--no-such-v8-flag",
    [],
    "V8 has no flag --no-such-v8-flag (node --v8-options lists them)",
  ],
  ["retry-base-delay", "5", [], "expected a duration"],
  ["retry-base-delay", "-1s"],
  ["retry-base-delay", "1x"],
  ["retry-base-delay", "0s", [], "expected a duration 1ms-24h"],
  ["retry-base-delay", "5m", [], "at most --retry-max-delay (2m)"],
  ["retry-max-delay", "25h", [], "expected a duration 1ms-24h"],
  ["resync-period", "500ms", [], "expected a duration 0s (off) or 1s-24h"],
  ["watch-timeout", "5s", [], "expected a duration 10s-24h"],
  ["watch-timeout", "10500ms", [], "whole seconds"],
  ["watch-stall-timeout", "0s"],
  ["shutdown-timeout", "20"],
  ["custom-termination-message", "x", [], "requires --custom-init-container"],
  ["custom-exit-codes", "1", [], "requires --custom-init-container"],
  ["custom-require-label", "a=b", [], "requires --custom-init-container"],
  ["custom-rule-name", "x", [], "requires --custom-init-container"],
  ["namespaces", "Shop", [], "namespace names"],
  ["exclude-namespaces", "a,,b"],
  ["exclude-namespaces", "a,b.c", [], 'namespace names, got "b.c"'],
  ["ambient-excluded-namespaces", "kube-system,Bad_NS", [], 'namespace names, got "Bad_NS"'],
  ["delete-bare-pods", "yes", [], "expected true, false, 1 or 0"],
  ["max-deletions-per-minute", "-5", [], "0-100000"],
  ["deletion-burst", "0", [], "1-100000"],
  ["max-inflight-deletions-per-node", "many"],
  ["max-inflight-deletions-per-namespace", "1.5"],
  ["cni-agent-gate", "maybe", [], "expected one of on, off"],
  ["cni-agent-gate", "on", ["--custom-init-container=v", "--custom-exit-codes=1"], "set --cni-agent-selector"],
  ["startup-taint", "sometimes", [], "expected one of"],
  ["startup-taint", "bootstrap-only", ["--cni-agent-gate=off"], "needs the CNI agents watched: --cni-agent-gate=on"],
  ["startup-taint", "continuous", ["--node-name=n1"], "not with --node-name"],
  ["startup-taint-keys", "Bad Key", ["--startup-taint=bootstrap-only"], "taint keys"],
  ["startup-taint-max-share", "0", ["--startup-taint=continuous"], "greater than 0"],
  ["startup-taint-max-share", "1.5", ["--startup-taint=continuous"], "at most 1"],
  ["startup-taint-not-ready-after", "500ms", ["--startup-taint=continuous"]],
  ["cni-agent-min-ready", "10", [], "expected a duration"],
  ["cni-agent-selector", "k8s-app in (", [], "malformed selector"],
  ["cni-agent-namespace", "Istio_System", [], "DNS label"],
  ["cni-agent-namespace", "istio=kube-system,istio=istio-system", [], "names the rule istio twice"],
  ["cni-agent-namespace", "istio=", [], "<rule>=<namespace>"],
  ["cni-agent-namespace", "a,b", [], "at most one bare namespace"],
  ["cni-agent-namespace", "linkerd=linkerd-cni", [], "names the rule linkerd, which is not in use (rules: istio)"],
  ["loop-backoff", "2h", [], "at most --loop-backoff-max (30m)"],
  ["loop-backoff-max", "0s"],
  ["max-broken-fraction", "0", [], "greater than 0 and at most 1"],
  ["max-broken-fraction", "1.5"],
  ["max-broken-fraction", "50%"],
  ["storm-min-broken", "0", [], "1-1000000"],
  ["leader-elect", "on", [], "expected true, false, 1 or 0"],
  ["leader-election-namespace", "-x"],
  ["leader-election-id", "Not A Name", [], "Lease name"],
  ["renew-deadline", "15s", [], "expected less than --lease-duration (15s)"],
  ["retry-period", "10s", [], "expected less than --renew-deadline (10s)"],
  ["output", "xml", [], "expected one of table, json, yaml"],
  ["repair", "please"],
  ["v8-flags", "no-opt", [], "expected V8 flags like --no-opt"],
  ["v8-flags", "--no-opt --no-maglev", [], "expected V8 flags like --no-opt"],
];

describe("config/parseConfig errors", () => {
  for (const [flag, text, extra = [], detail] of badValues) {
    const envName = `CNI_REPAIR_${flag.toUpperCase().replaceAll("-", "_")}`;
    it(`rejects --${flag}=${JSON.stringify(text)}`, () => {
      const error = errorOf([...commandFor(flag), `--${flag}=${text}`, ...extra]);
      expect(error.code).to.equal("ERR_CONFIG");
      expect(error.message).to.include(`invalid --${flag} ${JSON.stringify(text)}: `);
      if (detail !== undefined) expect(error.message).to.include(detail);
    });
    it(`rejects ${envName}=${JSON.stringify(text)}`, () => {
      const env: Record<string, string> = { [envName]: text };
      for (const arg of extra) {
        const [name = "", value = ""] = arg.slice(2).split("=");
        env[`CNI_REPAIR_${name.toUpperCase().replaceAll("-", "_")}`] = value;
      }
      const error = errorOf(commandFor(flag), env);
      expect(error.message).to.include(`invalid ${envName} ${JSON.stringify(text)}: `);
    });
  }

  it("words the documented examples exactly", () => {
    expect(errorOf(["run", "--mode", "remove"]).message).to.equal(
      'invalid --mode "remove": expected one of delete, label, report',
    );
    expect(errorOf(["run"], { CNI_REPAIR_HTTP_PORT: "99999" }).message).to.equal(
      'invalid CNI_REPAIR_HTTP_PORT "99999": expected a port 0-65535',
    );
  });

  it("names an unknown flag", () => {
    expect(errorOf(["run", "--bogus"]).message).to.include("unknown flag --bogus");
    expect(errorOf(["run", "--bogus=1"]).message).to.include("unknown flag --bogus");
    expect(errorOf(["-x"]).message).to.include("unknown flag -x");
    expect(errorOf(["run", "--Mode=label"]).message).to.include("unknown flag --Mode");
    expect(errorOf(["--help", "--bogus"]).message).to.include("unknown flag --bogus");
  });

  it("names a flag given without its value", () => {
    expect(errorOf(["run", "--mode"]).message).to.equal("flag --mode needs a value");
    expect(errorOf(["run", "--kubeconfig", "--help"]).message).to.include(
      "flag --kubeconfig needs a value, got flag --help",
    );
  });

  it("suggests the closest flag for a misspelt long flag, and nothing for a word far from all", () => {
    expect(errorOf(["run", "--max-deletions-per-minut=5"]).message).to.equal(
      "unknown flag --max-deletions-per-minut (did you mean --max-deletions-per-minute?) (see --help)",
    );
    expect(errorOf(["scan", "--namespace=shop"]).message).to.include("(did you mean --namespaces?)");
    expect(errorOf(["run", "--bogus"]).message).to.equal("unknown flag --bogus (see --help)");
    expect(errorOf(["run", "-x"]).message).to.equal("unknown flag -x (see --help)");
  });

  it("refuses flags without a command: run is explicit", () => {
    expect(errorOf(["--mode=report", "--workers=2"]).message).to.equal(
      "no command given (flags: --mode --workers); run is not implied: write 'cni-repair run [flags]' to start the controller",
    );
    expect(errorOf(["--help=false"]).message).to.include("no command given (flags: --help)");
  });

  it("names an unknown command, suggesting the closest one when it is a likely typo", () => {
    expect(errorOf(["scna"]).message).to.equal(
      'unknown command "scna" (did you mean scan?): expected run, scan, explain, version, help, --help or --version',
    );
    expect(errorOf(["explian", "ns/pod"]).message).to.include("(did you mean explain?)");
    expect(errorOf(["hepl"]).message).to.include("(did you mean help?)");
    expect(errorOf(["deploy"]).message).to.equal(
      'unknown command "deploy": expected run, scan, explain, version, help, --help or --version',
    );
    expect(errorOf(["help", "sacn"]).message).to.include('unknown command "sacn" (did you mean scan?)');
    expect(errorOf(["help", "scan", "run"]).message).to.equal('unexpected arguments after help scan: "run"');
  });

  it("names stray positional arguments", () => {
    expect(errorOf(["start"]).message).to.include('unknown command "start"');
    expect(errorOf(["run", "now", "please"]).message).to.include('unexpected arguments after run: "now" "please"');
    expect(errorOf(["run", "--mode", "label", "x"]).message).to.include('"x"');
  });

  it("explain takes exactly one <namespace>/<pod>", () => {
    expect(parseConfig(["explain", "ns/pod"], {}).target).to.deep.equal({ namespace: "ns", name: "pod" });
    expect(parseConfig(["explain", "ns/pod"], {}).command).to.equal("explain");
    expect(errorOf(["explain"]).message).to.include("explain needs a pod: cni-repair explain <namespace>/<pod>");
    expect(errorOf(["explain", "pod"]).message).to.equal('explain: "pod" is not <namespace>/<pod>');
    expect(errorOf(["explain", "a/b/c"]).message).to.equal('explain: "a/b/c" is not <namespace>/<pod>');
    expect(errorOf(["explain", "/pod"]).message).to.include("is not <namespace>/<pod>");
    expect(errorOf(["explain", "ns/a", "ns/b"]).message).to.include('unexpected arguments after explain ns/a: "ns/b"');
  });

  it("rejects a bad boolean value", () => {
    expect(errorOf(["--help=yes"]).message).to.equal('invalid --help "yes": expected true, false, 1 or 0');
  });

  it("checks env vars even when other flags come from argv", () => {
    expect(errorOf(["run", "--mode=label"], { CNI_REPAIR_WORKERS: "0" }).message).to.include("CNI_REPAIR_WORKERS");
  });

  it("names env vars for cross-flag errors", () => {
    const message = errorOf(["run"], { CNI_REPAIR_RETRY_BASE_DELAY: "10m" }).message;
    expect(message).to.include('invalid CNI_REPAIR_RETRY_BASE_DELAY "10m"');
  });
});

describe("config/a variable and a flag for the same setting", () => {
  it("refuses different values, naming both", () => {
    expect(errorOf(["run", "--preset=istio"], { CNI_REPAIR_PRESET: "istio,linkerd" }).message).to.equal(
      'CNI_REPAIR_PRESET="istio,linkerd" and --preset="istio" disagree: set one of them, or the same value in both ' +
        "(e.g. env -u CNI_REPAIR_PRESET cni-repair ...)",
    );
    expect(errorOf(["scan", "--mode", "report"], { CNI_REPAIR_MODE: "delete" }).message).to.include(
      'CNI_REPAIR_MODE="delete" and --mode="report" disagree',
    );
  });

  it("names a bad value in either before comparing", () => {
    expect(errorOf(["run", "--mode=report"], { CNI_REPAIR_MODE: "bogus" }).message).to.equal(
      'invalid CNI_REPAIR_MODE "bogus": expected one of delete, label, report',
    );
    expect(errorOf(["run", "--workers=x"], { CNI_REPAIR_WORKERS: "2" }).message).to.include('invalid --workers "x"');
  });
});

describe("config/flags of another subcommand", () => {
  for (const [argv, expected] of [
    [["run", "-o", "json"], "flag --output does not apply to run (accepted by: scan, explain)"],
    [["--output=json", "run"], "flag --output does not apply to run (accepted by: scan, explain)"],
    [["run", "--repair"], "flag --repair does not apply to run (accepted by: scan)"],
    [["explain", "ns/pod", "--repair"], "flag --repair does not apply to explain (accepted by: scan)"],
    [["scan", "--leader-elect=false"], "flag --leader-elect does not apply to scan (accepted by: run)"],
    [["explain", "ns/pod", "--workers=2"], "flag --workers does not apply to explain (accepted by: run, scan)"],
    [["version", "--mode=label"], "flag --mode does not apply to version (accepted by: run, scan, explain)"],
    [["--version", "--kubeconfig=x"], "flag --kubeconfig does not apply to version (accepted by: run, scan, explain)"],
    [["run", "--http-port=9000", "--help", "-o", "json"], "flag --output does not apply to run"],
  ] as const) {
    it(`refuses ${argv.join(" ")}`, () => {
      expect(errorOf([...argv]).message).to.include(expected);
    });
  }

  it("accepts them where they apply", () => {
    expect(parseConfig(["scan", "-o", "yaml", "--repair", "--workers=2"], {}).command).to.equal("scan");
    expect(parseConfig(["explain", "ns/pod", "-o", "json", "--mode=label"], {}).command).to.equal("explain");
    expect(parseConfig(["run", "--http-port=9000", "--leader-elect=false"], {}).command).to.equal("run");
    expect(parseConfig(["version", "--help"], {}).command).to.equal("help");
  });

  it("run refuses the variable of a flag only scan or explain accept", () => {
    expect(errorOf(["run"], { CNI_REPAIR_OUTPUT: "json" }).message).to.equal(
      "environment variable CNI_REPAIR_OUTPUT does not apply to run (its flag --output is accepted by: scan, explain); unset it for run",
    );
    expect(errorOf(["run"], { CNI_REPAIR_REPAIR: "true" }).message).to.include(
      "CNI_REPAIR_REPAIR does not apply to run",
    );
  });

  it("scan and explain ignore the variables of run's own flags, and use the shared ones", () => {
    // The Deployment's environment, copied into a shell: election, HTTP and retry settings mean nothing to scan.
    const deployment = {
      CNI_REPAIR_LEADER_ELECT: "false",
      CNI_REPAIR_HTTP_PORT: "9000",
      CNI_REPAIR_RESYNC_PERIOD: "1m",
      CNI_REPAIR_WORKERS: "8",
      CNI_REPAIR_MODE: "label",
      CNI_REPAIR_NAMESPACES: "shop",
    };
    const scan = parseConfig(["scan"], deployment).config;
    expect([scan.mode, scan.namespaces, scan.workers]).to.deep.equal(["label", ["shop"], 8]);
    expect([scan.httpPort, scan.resyncPeriodMs, scan.leaderElection?.id]).to.deep.equal([8080, 300_000, "cni-repair"]);
    const explain = parseConfig(["explain", "shop/web"], { ...deployment, CNI_REPAIR_REPAIR: "true" }).config;
    expect([explain.mode, explain.namespaces, explain.workers, explain.scan.repair]).to.deep.equal([
      "label",
      ["shop"],
      4,
      false,
    ]);
  });

  it("does not check an ignored variable's value", () => {
    expect(parseConfig(["scan"], { CNI_REPAIR_HTTP_PORT: "not a port" }).command).to.equal("scan");
    expect(errorOf(["run"], { CNI_REPAIR_HTTP_PORT: "not a port" }).message).to.include("CNI_REPAIR_HTTP_PORT");
  });
});
