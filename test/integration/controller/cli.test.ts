// The command line: bad flags exit 2 naming the value, help and version, and the HTTP endpoints.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { ControllerProcess, runCommand } from "../../harness/controller-process.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";
import { freePort } from "../../harness/ports.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { PLAIN } from "./start.js";

describe("cni-repair command line", () => {
  for (const [args, env, expected] of [
    [["run", "--mode=remove"], {}, '--mode "remove"'],
    [["run", "--preset=istio,consul"], {}, '--preset "istio,consul"'],
    [["run", "--custom-init-container=check", "--custom-exit-codes=0"], {}, '--custom-exit-codes "0"'],
    [["run", "--label-selector=app in (a"], {}, "--label-selector"],
    [["run", "--resync-period=5"], {}, '--resync-period "5"'],
    [["run", "--http-port=99999"], {}, '--http-port "99999"'],
    [["run", "--namespaces=shop,Blog"], {}, 'invalid --namespaces "shop,Blog": expected namespace names, got "Blog"'],
    [
      ["run"],
      { CNI_REPAIR_AMBIENT_EXCLUDED_NAMESPACES: "kube-system," },
      'invalid CNI_REPAIR_AMBIENT_EXCLUDED_NAMESPACES "kube-system,"',
    ],
    [["run", "--max-broken-fraction=50%"], {}, 'invalid --max-broken-fraction "50%": expected a fraction'],
    [["run", "--startup-taint-max-share=0"], {}, 'invalid --startup-taint-max-share "0": expected a fraction'],
    [["run", "--no-such-flag"], {}, "--no-such-flag"],
    [
      ["run"],
      { CNI_REPAIR_V8_FLAGS: "--no-opt,--no-optt" },
      'CNI_REPAIR_V8_FLAGS "--no-opt,--no-optt": V8 has no flag',
    ],
    [["run", "--max-deletions-per-minut=5"], {}, "(did you mean --max-deletions-per-minute?)"],
    [["scna"], {}, 'unknown command "scna" (did you mean scan?)'],
    [["help", "sacn"], {}, 'unknown command "sacn" (did you mean scan?)'],
    [["--mode=report"], {}, "no command given (flags: --mode); run is not implied"],
    [
      ["run", "--preset=istio"],
      { CNI_REPAIR_PRESET: "istio,linkerd" },
      'CNI_REPAIR_PRESET="istio,linkerd" and --preset="istio" disagree',
    ],
    [["run", "-o", "json"], {}, "flag --output does not apply to run (accepted by: scan, explain)"],
    [["explain", "ns/pod", "--repair"], {}, "flag --repair does not apply to explain (accepted by: scan)"],
    [["version", "--leader-elect=false"], {}, "flag --leader-elect does not apply to version (accepted by: run)"],
    [["run"], { CNI_REPAIR_REPAIR: "true" }, "environment variable CNI_REPAIR_REPAIR does not apply to run"],
    [["run"], { CNI_REPAIR_MODE: "nuke" }, 'CNI_REPAIR_MODE "nuke"'],
    [
      ["run"],
      { CNI_REPAIR_MAX_DELETIONS_PER_MINUT: "5" },
      "unknown environment variable CNI_REPAIR_MAX_DELETIONS_PER_MINUT (did you mean CNI_REPAIR_MAX_DELETIONS_PER_MINUTE?)",
    ],
  ] as const) {
    it(`exits 2 naming the bad value: ${[...args, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].join(" ")}`, async () => {
      const result = await runCommand(args, env);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include(expected);
    });
  }

  it("prints the commands, each command's own flags with their env vars, and the version", async () => {
    const overview = await runCommand(["--help"]);
    expect(overview.code).to.equal(0);
    expect(overview.stdout).to.match(/^ {2}explain <namespace>\/<pod> /m);
    const run = await runCommand(["run", "--help"]);
    expect(run.code).to.equal(0);
    expect(run.stdout).to.include("\nLeader election:\n").and.include("CNI_REPAIR_MAX_RETRIES");
    expect(run.stdout).to.not.include("--output");
    const scan = await runCommand(["scan", "--help"]);
    expect(scan.stdout).to.include("\nOutput:\n  -o, --output <table|json|yaml>").and.not.include("--leader-elect");
    const revision = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    for (const args of [["--version"], ["version"]]) {
      const version = await runCommand(args);
      expect(version.code, args.join(" ")).to.equal(0);
      expect(version.stdout).to.equal(`cni-repair 0.1.0 (commit ${revision}, node ${process.version})\n`);
    }
  });

  it("bare, prints the overview and exits 0 without connecting to any cluster, whatever the environment says", async () => {
    const connections: Socket[] = [];
    const server = createServer((socket) => connections.push(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const dir = ownedTempDir("cni-repair-bare-");
    const kubeconfig = JSON.parse(controlPlane().kubeconfigYaml()) as { clusters: { cluster: { server: string } }[] };
    for (const entry of kubeconfig.clusters)
      entry.cluster.server = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    writeFileSync(join(dir, "kubeconfig"), JSON.stringify(kubeconfig));
    try {
      const bare = await runCommand([], { KUBECONFIG: join(dir, "kubeconfig"), CNI_REPAIR_MODE: "delete" });
      expect(bare.code, bare.stderr).to.equal(0);
      expect(bare.stdout).to.match(/^Usage: cni-repair <command> \[flags\]\n/);
      expect(bare.stdout).to.include("the controller starts only with 'run'");
      const help = await runCommand(["help", "scan"]);
      expect(help.code).to.equal(0);
      expect(help.stdout).to.equal((await runCommand(["scan", "--help"])).stdout);
      expect(connections).to.have.length(0);
    } finally {
      for (const socket of connections) socket.destroy();
      server.close();
    }
  });

  it("exits 1 with a clear message when the kubeconfig does not exist", async () => {
    const result = await runCommand(["run", "--kubeconfig=/nonexistent/kubeconfig", "--log-format=text"]);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/cannot connect.*--kubeconfig file .*\/nonexistent\/kubeconfig.* does not exist/);
  });

  it("serves /metrics, /healthz and /readyz once synced; exits 0 on SIGTERM", async () => {
    const controller = await ControllerProcess.start({
      args: [`--kubeconfig=${controlPlane().kubeconfigPath}`, ...PLAIN],
    });
    const metrics = await controller.get("/metrics");
    expect(metrics.status).to.equal(200);
    const revision = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    expect(metrics.body).to.include(
      `cni_repair_build_info{version="0.1.0",revision="${revision}",node_version="${process.version}"} 1`,
    );
    expect(metrics.body).to.include('cni_repair_pods_repaired_total{type="delete",result="skip"} 0');
    expect(metrics.body).to.include("process_resident_memory_bytes");
    expect((await controller.get("/healthz")).status).to.equal(200);
    expect((await controller.get("/readyz")).status).to.equal(200);
    expect(await controller.stop("SIGTERM")).to.equal(0);
    expect(controller.logsWith("stopped")).to.have.length(1);
  });

  it("is live but not ready while the API server cannot be reached", async () => {
    const dir = ownedTempDir("cni-repair-unreachable-");
    const kubeconfig = join(dir, "kubeconfig");
    const unreachable = JSON.parse(controlPlane().kubeconfigYaml()) as { clusters: { cluster: { server: string } }[] };
    for (const entry of unreachable.clusters) entry.cluster.server = `https://127.0.0.1:${await freePort()}`;
    writeFileSync(kubeconfig, JSON.stringify(unreachable));
    const controller = await ControllerProcess.start({
      args: [`--kubeconfig=${kubeconfig}`, ...PLAIN],
      waitReady: false,
    });
    try {
      await waitFor("the HTTP server", async () => (await controller.get("/healthz")).status === 200);
      const ready = await controller.get("/readyz");
      expect(ready.status).to.equal(503);
      expect(ready.body).to.include("[-] initial-list");
    } finally {
      expect(await controller.stop()).to.equal(0);
    }
  });
});
