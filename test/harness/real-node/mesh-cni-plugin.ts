// A chained CNI plugin that plays a service mesh's CNI plugin on the real test node: run after the bridge plugin
// for every pod sandbox, it installs the mesh's redirect rule in the pod's network namespace, but only while the
// node's "CNI agent" is ready (a switch file exists). A pod whose sandbox is set up while the agent is not ready
// gets no rule, so its validator fails for real: the race cni-repair repairs.
//
// The runtime (containerd) runs it as a CNI plugin: the network configuration on stdin, CNI_COMMAND, CNI_NETNS,
// CNI_ARGS in the environment, the result on stdout (CNI spec 1.0, "Plugin execution"). Its options in the
// configuration: agentReadyFile (the switch) and logFile (one JSON line per ADD, for the tests).
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync } from "node:fs";

/** The rule Istio's CNI plugin installs (its validator checks it): outbound traffic to the validation address
 * goes to the local proxy port instead. */
export const REDIRECT_RULE = [
  "-t",
  "nat",
  "-A",
  "OUTPUT",
  "-p",
  "tcp",
  "-d",
  "10.255.255.1",
  "--dport",
  "80",
  "-j",
  "REDIRECT",
  "--to-ports",
  "15001",
] as const;

const SUPPORTED_VERSIONS = ["0.3.0", "0.3.1", "0.4.0", "1.0.0"];

type PluginConfig = {
  readonly cniVersion?: string;
  readonly agentReadyFile?: string;
  readonly logFile?: string;
  readonly prevResult?: unknown;
};

/** One line of the plugin's log: which sandbox got the rule and which did not. */
export type MeshCniRecord = {
  readonly atMs: number;
  readonly pod: string;
  readonly namespace: string;
  readonly containerId: string;
  /** The sandbox's network namespace (a path), for the agent's in-place repair. */
  readonly netns: string;
  readonly redirected: boolean;
};

/** Installs the redirect rule in a network namespace (given by its path). */
export function installRedirect(netns: string): void {
  execFileSync("nsenter", [`--net=${netns}`, "iptables", "-w", ...REDIRECT_RULE], { stdio: "pipe" });
}

/** K8S_POD_NAME and K8S_POD_NAMESPACE from CNI_ARGS ("K=V;K=V"), which the CRI runtime passes. */
function podOf(cniArgs: string): { pod: string; namespace: string } {
  const args = new Map(cniArgs.split(";").map((pair) => pair.split("=", 2) as [string, string]));
  return { pod: args.get("K8S_POD_NAME") ?? "", namespace: args.get("K8S_POD_NAMESPACE") ?? "" };
}

function add(config: PluginConfig, env: NodeJS.ProcessEnv): string {
  const netns = env.CNI_NETNS;
  if (!netns) throw new Error("CNI_NETNS is not set");
  if (!config.agentReadyFile) throw new Error("agentReadyFile is missing from the plugin's configuration");
  const redirected = existsSync(config.agentReadyFile);
  if (redirected) installRedirect(netns);
  if (config.logFile) {
    const record: MeshCniRecord = {
      atMs: Date.now(),
      ...podOf(env.CNI_ARGS ?? ""),
      containerId: env.CNI_CONTAINERID ?? "",
      netns,
      redirected,
    };
    appendFileSync(config.logFile, `${JSON.stringify(record)}\n`);
  }
  // A chained plugin passes the previous plugin's result on (it adds no interfaces or addresses).
  return JSON.stringify(config.prevResult ?? { cniVersion: config.cniVersion });
}

/** Runs one CNI command; returns what goes to stdout. DEL and CHECK have nothing to undo or check: the rule lives
 * and dies with the pod's network namespace. */
export function runCniCommand(command: string, stdin: string, env: NodeJS.ProcessEnv): string {
  if (command === "VERSION") return JSON.stringify({ cniVersion: "1.0.0", supportedVersions: SUPPORTED_VERSIONS });
  const config = JSON.parse(stdin) as PluginConfig;
  if (command === "ADD") return add(config, env);
  if (command === "DEL" || command === "CHECK") return "";
  throw new Error(`unknown CNI_COMMAND '${command}'`);
}
