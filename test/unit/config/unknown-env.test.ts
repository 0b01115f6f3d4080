// Unknown CNI_REPAIR_* variables are refused with the closest known name; everything else passes.
import { expect } from "chai";
import { parseConfig } from "../../../src/config/config.js";
import { ConfigError } from "../../../src/config/config-error.js";
import { envVarName, flagNames } from "../../../src/config/flags.js";
import { INTERNAL_ENV_VARS, rejectUnknownEnv } from "../../../src/config/unknown-env.js";

const flagEnvVars = flagNames.flatMap((name) => envVarName(name) ?? []);

function messageOf(env: Record<string, string>): string {
  try {
    parseConfig(["run"], env);
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`parseConfig accepted ${JSON.stringify(env)}`);
}

describe("config/unknown CNI_REPAIR_* variables", () => {
  for (const [typo, meant] of [
    ["CNI_REPAIR_MAX_DELETIONS_PER_MINUT", "CNI_REPAIR_MAX_DELETIONS_PER_MINUTE"],
    ["CNI_REPAIR_MAX_DELETION_PER_MINUTE", "CNI_REPAIR_MAX_DELETIONS_PER_MINUTE"],
    ["CNI_REPAIR_DELETION_BRUST", "CNI_REPAIR_DELETION_BURST"],
    ["CNI_REPAIR_WORKER", "CNI_REPAIR_WORKERS"],
    ["CNI_REPAIR_IN_CLUSTER_ROT", "CNI_REPAIR_IN_CLUSTER_ROOT"],
  ] as const) {
    it(`${typo}: names it and suggests ${meant}`, () => {
      expect(messageOf({ [typo]: "1" })).to.equal(`unknown environment variable ${typo} (did you mean ${meant}?)`);
    });
  }

  it("lists the other unknown ones too, in a stable order", () => {
    expect(messageOf({ CNI_REPAIR_ZZZ: "1", CNI_REPAIR_MODEE: "label", CNI_REPAIR_AAA: "2" })).to.match(
      /^unknown environment variable CNI_REPAIR_AAA \(did you mean \S+\?\); also unknown: CNI_REPAIR_MODEE, CNI_REPAIR_ZZZ$/,
    );
  });

  it("accepts every flag's variable and every internal one, and ignores other prefixes", () => {
    const env = Object.fromEntries(
      [...flagEnvVars, ...INTERNAL_ENV_VARS, "CNI_REPAIRX", "MY_CNI_REPAIR_X"].map((n) => [n, ""]),
    );
    expect(() => rejectUnknownEnv(env, flagEnvVars)).not.to.throw();
  });

  it("does not stop --help or --version", () => {
    expect(parseConfig(["--help"], { CNI_REPAIR_BOGUS: "1" }).command).to.equal("help");
    expect(parseConfig(["--version"], { CNI_REPAIR_BOGUS: "1" }).command).to.equal("version");
  });

  describe("Kubernetes' service links (a pod next to a Service named cni-repair-…)", () => {
    /** What the kubelet writes for the chart's Service cni-repair-metrics (port "metrics" 8080/TCP) at this IP. */
    const metricsLinks = (ip: string, hostPort: string): Record<string, string> => ({
      CNI_REPAIR_METRICS_SERVICE_HOST: ip,
      CNI_REPAIR_METRICS_SERVICE_PORT: "8080",
      CNI_REPAIR_METRICS_SERVICE_PORT_METRICS: "8080",
      CNI_REPAIR_METRICS_PORT: `tcp://${hostPort}`,
      CNI_REPAIR_METRICS_PORT_8080_TCP: `tcp://${hostPort}`,
      CNI_REPAIR_METRICS_PORT_8080_TCP_PROTO: "tcp",
      CNI_REPAIR_METRICS_PORT_8080_TCP_PORT: "8080",
      CNI_REPAIR_METRICS_PORT_8080_TCP_ADDR: ip,
    });

    for (const [family, ip, hostPort] of [
      ["IPv4", "10.96.12.34", "10.96.12.34:8080"],
      ["IPv6", "fd00:10:96::1234", "[fd00:10:96::1234]:8080"],
    ] as const) {
      it(`ignores every variable of the metrics Service at an ${family} ClusterIP`, () => {
        expect(() => rejectUnknownEnv(metricsLinks(ip, hostPort), flagEnvVars)).not.to.throw();
        expect(parseConfig(["scan"], metricsLinks(ip, hostPort)).command).to.equal("scan");
      });
    }

    it("ignores a Service named cni-repair itself, a UDP and an SCTP port, and a second named port", () => {
      const env = {
        CNI_REPAIR_SERVICE_HOST: "10.0.0.7",
        CNI_REPAIR_SERVICE_PORT: "53",
        CNI_REPAIR_SERVICE_PORT_DNS_UDP: "53",
        CNI_REPAIR_SERVICE_PORT_STREAM: "9000",
        CNI_REPAIR_PORT: "udp://10.0.0.7:53",
        CNI_REPAIR_PORT_53_UDP: "udp://10.0.0.7:53",
        CNI_REPAIR_PORT_53_UDP_PROTO: "udp",
        CNI_REPAIR_PORT_9000_SCTP: "sctp://10.0.0.7:9000",
        CNI_REPAIR_PORT_9000_SCTP_ADDR: "10.0.0.7",
      };
      expect(() => rejectUnknownEnv(env, flagEnvVars)).not.to.throw();
    });

    it("still refuses an unknown variable beside them, naming only it", () => {
      expect(messageOf({ ...metricsLinks("10.96.12.34", "10.96.12.34:8080"), CNI_REPAIR_WORKER: "2" })).to.equal(
        "unknown environment variable CNI_REPAIR_WORKER (did you mean CNI_REPAIR_WORKERS?)",
      );
    });

    for (const [why, env, refused] of [
      [
        "a port-shaped name without its Service's _SERVICE_HOST",
        { CNI_REPAIR_HTP_PORT: "tcp://10.0.0.1:80" },
        "CNI_REPAIR_HTP_PORT",
      ],
      [
        "a _PORT whose value is not the kubelet's proto://IP:port",
        { CNI_REPAIR_HTP_SERVICE_HOST: "10.0.0.1", CNI_REPAIR_HTP_PORT: "9090" },
        "CNI_REPAIR_HTP_PORT",
      ],
      [
        "a _SERVICE_HOST that holds no IP",
        { CNI_REPAIR_METRICS_SERVICE_HOST: "metrics.local" },
        "CNI_REPAIR_METRICS_SERVICE_HOST",
      ],
      [
        "a link to another IP than its Service's",
        { CNI_REPAIR_X_SERVICE_HOST: "10.0.0.1", CNI_REPAIR_X_PORT_80_TCP_ADDR: "10.0.0.2" },
        "CNI_REPAIR_X_PORT_80_TCP_ADDR",
      ],
      [
        "a protocol Kubernetes does not have",
        { CNI_REPAIR_X_SERVICE_HOST: "10.0.0.1", CNI_REPAIR_X_PORT_80_QUIC: "quic://10.0.0.1:80" },
        "CNI_REPAIR_X_PORT_80_QUIC",
      ],
      [
        "a named port whose value is no port",
        { CNI_REPAIR_X_SERVICE_HOST: "10.0.0.1", CNI_REPAIR_X_SERVICE_PORT_MAX_RETRIES: "five" },
        "CNI_REPAIR_X_SERVICE_PORT_MAX_RETRIES",
      ],
    ] as const) {
      it(`refuses ${why}`, () => {
        expect(messageOf(env)).to.match(new RegExp(`^unknown environment variable ${refused} `));
      });
    }
  });
});
