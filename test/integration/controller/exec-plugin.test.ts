// Out of cluster with an exec-plugin user (as EKS, GKE and OIDC helpers work): the kubeconfig path loads
// @kubernetes/client-node on demand, runs the plugin for a token, and the controller repairs as that user. A plugin
// runs once for the start's requests together, from where kubectl would run it and told what kubectl tells it; one
// that cannot be started or needs a terminal ends the start, naming it; one that never answers is waited on for a
// request's timeout and said so, not for ever.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ADMIN_USER } from "../../harness/control-plane.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { GiveUp, waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

describe("controller out of cluster with an exec-plugin user", () => {
  const t = controllerTest();
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "cni-repair-exec-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A kubeconfig whose users get their token from `command`, with `more` in their exec block. */
  function execKubeconfig(command: string, more: Record<string, unknown> = {}): string {
    const doc = JSON.parse(controlPlane().kubeconfigYaml()) as {
      users: { name: string; user: Record<string, unknown> }[];
    };
    for (const user of doc.users) {
      user.user = {
        exec: { apiVersion: "client.authentication.k8s.io/v1", command, interactiveMode: "Never", ...more },
      };
    }
    const kubeconfig = join(dir, "exec.kubeconfig");
    writeFileSync(kubeconfig, JSON.stringify(doc), { mode: 0o600 });
    return kubeconfig;
  }

  /** A plugin script that counts its calls in `calls`, then runs `body`. */
  function plugin(calls: string, body: string): string {
    const file = join(dir, "token-plugin.sh");
    writeFileSync(file, `#!/bin/sh\necho called >> '${calls}'\n${body}\n`);
    chmodSync(file, 0o700);
    return file;
  }

  const callsIn = (file: string): number => readFileSync(file, "utf8").trim().split("\n").length;

  it("runs the plugin once for its token and repairs as the user the token names", async () => {
    const plane = controlPlane();
    const calls = join(dir, "calls");
    // Prints an ExecCredential, as a cloud provider's helper would.
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: plane.adminToken },
    });
    const kubeconfig = execKubeconfig(plugin(calls, `echo '${credential}'`));

    const running = t.adopt(
      await ControllerProcess.start({
        args: [`--kubeconfig=${kubeconfig}`, `--field-selector=metadata.namespace=${t.namespace}`, ...PLAIN],
      }),
    );
    expect(running.logsWith("using credentials")[0]?.source).to.equal(`--kubeconfig=${kubeconfig}`);
    expect(running.logsWith("connected")[0]?.identity).to.equal(ADMIN_USER);
    // The start's lists, watches and checks go out together: they share one run of the plugin, whose token has no
    // expiry and so is kept.
    expect(callsIn(calls)).to.equal(1);

    await createPodInState(t.api, { namespace: t.namespace, name: "broken" });
    await waitFor("the delete", () => controllerDeletes(plane.auditLogPath, t.namespace).length === 1);
    expect(controllerDeletes(plane.auditLogPath, t.namespace)[0]?.responseStatus?.code).to.equal(200);
  });

  it("runs a plugin named relative to its kubeconfig, and tells it the cluster as kubectl does", async () => {
    const plane = controlPlane();
    const calls = join(dir, "calls");
    const execInfo = join(dir, "exec-info.json");
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: plane.adminToken },
    });
    plugin(calls, `printf '%s' "$KUBERNETES_EXEC_INFO" > '${execInfo}'\necho '${credential}'`);
    // Relative to the kubeconfig's directory, not to the controller's working directory (the repository's root).
    const kubeconfig = execKubeconfig("./token-plugin.sh", { provideClusterInfo: true });

    const running = t.adopt(
      await ControllerProcess.start({
        args: [`--kubeconfig=${kubeconfig}`, `--field-selector=metadata.namespace=${t.namespace}`, ...PLAIN],
      }),
    );
    expect(running.logsWith("connected")[0]?.identity).to.equal(ADMIN_USER);
    expect(JSON.parse(readFileSync(execInfo, "utf8"))).to.deep.equal({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      spec: {
        interactive: false,
        cluster: { server: plane.server, "certificate-authority-data": Buffer.from(plane.caPem).toString("base64") },
      },
    });
    await createPodInState(t.api, { namespace: t.namespace, name: "broken" });
    await waitFor("the delete", () => controllerDeletes(plane.auditLogPath, t.namespace).length === 1);
  });

  it("ends the start naming a plugin that asks for a terminal", async () => {
    const controller = await ControllerProcess.start({
      args: [`--kubeconfig=${execKubeconfig("aws", { interactiveMode: "Always" })}`, ...PLAIN],
      waitReady: false,
    });
    try {
      expect(await controller.exited).to.equal(1);
      expect(controller.logsWith("cannot connect")[0]?.error).to.match(
        /^kubeconfig user "[^"]+": its exec plugin's interactiveMode is Always, and a controller has no terminal/,
      );
    } finally {
      await controller.stop();
    }
  });

  it("ends the start naming a plugin that cannot be started, with its install hint", async () => {
    const missing = join(dir, "no-such-plugin");
    const installHint = "Install no-such-plugin from your cloud's tools.";
    const controller = await ControllerProcess.start({
      args: [`--kubeconfig=${execKubeconfig(missing, { installHint })}`, ...PLAIN],
      waitReady: false,
    });
    try {
      expect(await controller.exited).to.equal(1);
      const [line] = controller.logsWith("cannot connect");
      expect(line?.error).to.match(
        new RegExp(`^cannot get credentials for user "[^"]+" \\(exec plugin ${missing}\\): spawn ${missing} ENOENT`),
      );
      expect(line?.error).to.include(`(the exec plugin cannot be started: ENOENT); install hint: ${installHint}`);
    } finally {
      await controller.stop();
    }
  });

  it("waits on a plugin that never answers for a request's timeout, says so, starts no second one, and stops at SIGTERM", async function () {
    this.timeout(120_000);
    const calls = join(dir, "calls");
    const pidFile = join(dir, "plugin.pid");
    const kubeconfig = execKubeconfig(plugin(calls, `echo $$ > '${pidFile}'\nexec sleep 300`));
    // Not adopted: it is stopped below while still in its start-up checks.
    const controller = await ControllerProcess.start({
      args: [`--kubeconfig=${kubeconfig}`, ...PLAIN],
      waitReady: false,
    });
    let exitCode: number | null | undefined;
    void controller.exited.then((code) => {
      exitCode = code;
    });
    try {
      const { warning } = await waitFor(
        "the warning that credentials did not come",
        () => {
          if (exitCode !== undefined) throw new GiveUp(`exited ${exitCode}: ${controller.output()}`);
          const [warning] = controller.logsWith("cannot get credentials yet; will keep trying");
          return warning && { warning };
        },
        { timeoutMs: 60_000 },
      );
      expect(warning?.error).to.match(
        /: not sent: no credentials for user "[^"]+" \(exec plugin .*token-plugin\.sh\) within 30 s/,
      );
      // Every request since (the lists' retries, the permission check) joined the one stuck plugin.
      expect(callsIn(calls)).to.equal(1);
      // A stop during the start-up checks is a stop: exit 0 and its log lines, though the plugin still holds its
      // pipes open (and not SIGKILLed after stop()'s grace period: that would be a null code).
      expect(await controller.stop()).to.equal(0);
      expect(controller.logsWith("shutting down")[0]).to.include({ signal: "SIGTERM", during: "start-up checks" });
      expect(controller.logsWith("stopped")).to.have.length(1);
    } finally {
      await controller.stop();
      process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
    }
  });
});
