// `make demo` end to end: its own control plane, the narrated repairs and holds, and Ctrl-C leaving nothing behind.
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { isAlive } from "../../harness/owned-dirs.js";
import { waitFor } from "../../harness/wait.js";

const DEMO = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "demo", "demo.js");

/** Every process below pid, from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

describe("make demo", function () {
  this.timeout(240_000);
  let demo: ChildProcessByStdio<null, Readable, Readable> | undefined;
  const output: string[] = [];

  afterEach(function () {
    if (this.currentTest?.state === "failed") console.log(output.join("\n"));
    // Its own process group, as in a terminal: a leftover group is killed whole.
    if (demo?.pid !== undefined && demo.exitCode === null && demo.signalCode === null)
      process.kill(-demo.pid, "SIGKILL");
  });

  it("repairs and holds with reasons, then Ctrl-C ends every process and removes the temporary directory", async () => {
    demo = spawn(process.execPath, [DEMO, "--agent-ready-after=3"], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const exited = new Promise<number | null>((resolve) => demo?.once("exit", (code) => resolve(code)));
    createInterface({ input: demo.stdout }).on("line", (line) => output.push(line));
    createInterface({ input: demo.stderr }).on("line", (line) => output.push(`stderr: ${line}`));
    const text = () => output.join("\n");

    await waitFor(
      "the demo to finish its story",
      () => {
        if (demo?.exitCode !== null) throw new Error(`the demo exited with ${demo?.exitCode}`);
        return text().includes("done: every pod that could be repaired");
      },
      {
        timeoutMs: 180_000,
        intervalMs: 250,
      },
    );
    for (const expected of [
      /metrics: +http:\/\/127\.0\.0\.1:\d+\/metrics/,
      /✔ deleted demo\/checkout-7d9f6b-x2k4p — istio: istio-validation exited 126/,
      /✔ deleted demo\/books-7d9f6b-q9w2e — linkerd: linkerd-network-validator exited 95/,
      /✔ deleted demo\/migrate-job-h4s8d/,
      /⏸ held demo\/debug-shell \[bare_pod\]/,
      /✔ labelled demo\/debug-shell/,
      /⏸ held demo\/report-job-r7t2m \[terminal\]/,
      /⏸ held demo\/api-7d9f6b-m3n8b \[cni_agent_not_ready\]/,
      /✔ deleted demo\/api-7d9f6b-m3n8b/,
      /✔ deleted demo\/worker-7d9f6b-k5j6h/,
      /\(ReplicaSet\) created checkout-7d9f6b-\w+, healthy this time/,
      /── repaired delete\/success \d+, label\/success 1 · held now bare_pod 1, terminal 1/,
    ]) {
      expect(text()).to.match(expected);
    }
    expect(text()).to.not.include("stderr:");
    const kubeconfig = /kubeconfig: (\S+)/.exec(text())?.[1] ?? "";
    const pids = descendants(demo.pid ?? 0);
    expect(pids.length, "controller, etcd, kube-apiserver").to.be.at.least(3);

    process.kill(-(demo.pid ?? 0), "SIGINT");
    expect(await exited).to.equal(0);
    expect(text()).to.match(/stopped: controller and control plane ended, \S+ removed/);
    await waitFor("every process of the demo to end", () => pids.every((pid) => !isAlive(pid)));
    expect(existsSync(dirname(kubeconfig))).to.equal(false);
  });
});
