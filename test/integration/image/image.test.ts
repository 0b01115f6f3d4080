// The image `make image` built, run the way the kubelet runs the cluster and per-node overlays' pods: podman (with
// runc) starts the amd64 image with the pod's securityContext (read-only root, all capabilities dropped, UID 65532),
// its container's command, args and env, and a TokenRequest token bound to a pod on the node, CA and namespace
// mounted where a pod has them; the API server is the test's (host network, loopback).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { createCniAgent } from "../../harness/cni-agents.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { pinnedInputs, productionNpmPackages } from "../../harness/image-inputs.js";
import { kubeletRunFlags } from "../../harness/kubelet-run-flags.js";
import { expectInstalledIdentity, installedPodIdentity } from "../../harness/mode-scenarios.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { OciLayout } from "../../harness/oci-layout.js";
import {
  controllerContainer,
  INSTALL,
  installOverlay,
  type Overlay,
  podCommand,
  renderOverlay,
  uninstall,
  workloadOf,
} from "../../harness/overlays.js";
import { Podman } from "../../harness/podman.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";

const SERVICE_ACCOUNT_DIR = "var/run/secrets/kubernetes.io/serviceaccount";
const POD_NAME = "cni-repair-image-0";
/** Where each architecture's Node binary finds its dynamic loader and glibc (none of it can run here but amd64). */
const LIBRARIES: Record<string, string[]> = {
  amd64: ["lib64/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6", "usr/lib/x86_64-linux-gnu/libstdc++.so.6"],
  arm64: ["lib/ld-linux-aarch64.so.1", "lib/aarch64-linux-gnu/libc.so.6", "usr/lib/aarch64-linux-gnu/libstdc++.so.6"],
};
/** Programs a shell or a package manager would bring; the image must have none of them. */
const FORBIDDEN = /(^|\/)(sh|bash|dash|ash|busybox|dpkg|apt|apt-get|rpm|yum|apk|npm|npx|corepack)$/;

describe("image: the amd64 image under podman, as the kubelet would run it", function () {
  // Loading the image copies its 223 MB into podman's vfs storage, and each container start copies it again.
  this.timeout(180_000);
  const layout = OciLayout.built();
  let podman: Podman;
  let imageId: string;

  before(async () => {
    podman = Podman.create();
    imageId = await podman.load(layout.dir, "amd64");
  });

  after(async () => {
    await podman?.destroy();
  });

  it("holds amd64 and arm64; podman loaded the amd64 image, which runs as 65532 and has no shell or package manager", async () => {
    expect(layout.architectures()).to.have.members(["amd64", "arm64"]);
    expect(`sha256:${imageId}`).to.equal(layout.manifest("amd64").config.digest);
    expect(await podman.ok("image", "inspect", "--format", "{{.Config.User}} {{.Architecture}}", imageId)).to.equal(
      "65532:65532 amd64",
    );
    for (const architecture of ["amd64", "arm64"]) {
      const files = await layout.files(architecture);
      expect(files, architecture).to.include.members(["usr/local/bin/node", ...(LIBRARIES[architecture] ?? [])]);
      expect(
        files.filter((file) => /^(usr\/(local\/)?)?s?bin\/./.test(file)),
        architecture,
      ).to.deep.equal(["usr/local/bin/node"]);
      expect(
        files.filter((file) => FORBIDDEN.test(file)),
        architecture,
      ).to.deep.equal([]);
    }
    const shell = await podman.run("run", "--rm", "--pull=never", "--network=host", "--entrypoint=/bin/sh", imageId);
    expect(shell.code).to.not.equal(0);
    expect(shell.stderr).to.match(/no such file or directory/i);
  });

  it("has an SPDX SBOM per architecture listing Node, every pinned Debian package and every production npm package", () => {
    for (const architecture of ["amd64", "arm64"]) {
      const sbom = JSON.parse(readFileSync(join(layout.dir, "..", `sbom-linux-${architecture}.spdx.json`), "utf8")) as {
        spdxVersion: string;
        packages: { name: string; versionInfo?: string }[];
      };
      expect(sbom.spdxVersion).to.match(/^SPDX-2\./);
      const listed = new Set(sbom.packages.map((entry) => `${entry.name}@${entry.versionInfo}`));
      const expected = [
        ...pinnedInputs("node", architecture).map((node) => ({ name: "node", version: node.version })),
        ...pinnedInputs("deb", architecture),
        ...productionNpmPackages(),
      ].map((entry) => `${entry.name}@${entry.version}`);
      expect(expected.length, architecture).to.be.above(100);
      expect(
        expected.filter((entry) => !listed.has(entry)),
        architecture,
      ).to.deep.equal([]);
    }
  });

  it("starts from its code cache, read-only, as the DaemonSet starts it: V8 accepts it, and `run` loads no package from node_modules", async () => {
    const spec = controllerContainer(await renderOverlay("per-node"));
    const { env } = podCommand(spec, { namespace: INSTALL.namespace, nodeName: "node-a", podName: POD_NAME });
    expect(env.CNI_REPAIR_V8_FLAGS, "the DaemonSet's compiler flags, set after loading").to.equal(
      "--no-opt,--no-maglev,--invocation-count-for-turbofan=400",
    );
    // No credentials: `run` loads its modules, then exits 1 before any request.
    const started = await podman.run(
      "run",
      "--rm",
      "--pull=never",
      "--network=none",
      "--read-only",
      "--cap-drop=all",
      ...Object.entries({ ...env, NODE_DEBUG: "cni_repair_boot,module" }).map(
        ([name, value]) => `--env=${name}=${value}`,
      ),
      imageId,
      "run",
    );
    expect(started.code, started.stderr).to.equal(1);
    expect(started.stdout + started.stderr).to.include("no Kubernetes credentials found");
    // src/boot/main.ts: the bundled app (image/bundle.sh) from the cache image/code-cache.sh made beside it.
    expect(started.stderr).to.match(/code cache of \/app\/dist\/src\/cli\/app\.js accepted/);
    // Every module `run` evaluates is in the bundle: client-node (a kubeconfig), undici (plain HTTP or HTTP/1.1
    // only) and yaml (scan's and explain's output) are loaded from node_modules only when needed, never at start.
    const files = [...started.stderr.matchAll(/MODULE \d+: load "([^"]+)"/g)].map((match) => match[1]);
    expect(files).to.deep.equal(["/app/dist/src/cli/main.js"]);
  });

  describe("in-cluster with each workload's pod spec and permissions", () => {
    let api: CoreV1Api;
    let namespace: string;
    let identity: { env: Record<string, string>; cleanup(): Promise<void> } | undefined;
    let controller: ControllerProcess | undefined;
    const container = `cni-repair-image-${process.pid}`;

    beforeEach(async () => {
      api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
      namespace = await createTestNamespace(api, "img");
    });

    afterEach(async function () {
      if (this.currentTest?.state === "failed") console.log(controller?.output());
      await controller?.stop("SIGKILL", 1_000);
      await podman.run("rm", "--force", "--time", "0", container);
      await identity?.cleanup();
      identity = undefined;
      await uninstall(controlPlane());
    });

    /**
     * Installs the overlay and runs its controller container from the image as the kubelet would run the workload's
     * pod on node `<namespace>-a`: the pod's securityContext, the container's command, args and env, and a token
     * bound to a pod of the ServiceAccount on that node (so it names the node), with the CA and namespace file.
     */
    const startInImage = async (overlay: Overlay): Promise<{ command: string[] | undefined; node: string }> => {
      const plane = controlPlane();
      const node = `${namespace}-a`;
      const { rendered } = await installOverlay(plane, overlay);
      const podSpec = workloadOf(rendered).spec?.template.spec;
      if (!podSpec) throw new Error(`the ${overlay} overlay renders no pod spec`);
      const spec = controllerContainer(rendered);
      const { args, env } = podCommand(spec, { namespace: INSTALL.namespace, nodeName: node, podName: POD_NAME });
      await createCniAgent(api, {
        namespace,
        mesh: "istio",
        nodeName: node,
        readySince: new Date(Date.now() - 3_600_000),
      });
      identity = await installedPodIdentity(plane, { nodeName: node, podName: POD_NAME });
      const secrets = join(identity.env.CNI_REPAIR_IN_CLUSTER_ROOT ?? "", SERVICE_ACCOUNT_DIR);
      const containerEnv = {
        ...env,
        KUBERNETES_SERVICE_HOST: identity.env.KUBERNETES_SERVICE_HOST ?? "",
        KUBERNETES_SERVICE_PORT: identity.env.KUBERNETES_SERVICE_PORT ?? "",
      };
      controller = await ControllerProcess.start({
        launcher: podman.command(
          "run",
          `--name=${container}`,
          "--pull=never",
          "--network=host",
          ...kubeletRunFlags(podSpec, spec),
          `--volume=${secrets}:/${SERVICE_ACCOUNT_DIR}:ro`,
          ...Object.entries(containerEnv).map(([name, value]) => `--env=${name}=${value}`),
          imageId,
        ),
        env: podman.env,
        args: [...args, `--field-selector=metadata.namespace=${namespace}`, "--http-port=0"],
        readyTimeoutMs: 90_000,
      });
      expectInstalledIdentity(controller);
      return { command: spec.command, node };
    };

    /** The container's main process as the kernel sees it: its command line, /proc/<pid>/status and the root mount. */
    const processOf = async () => {
      const pid = await podman.ok("inspect", "--format", "{{.State.Pid}}", container);
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "m").exec(status)?.[1]?.split(/\s+/);
      const rootMount = readFileSync(`/proc/${pid}/mountinfo`, "utf8")
        .split("\n")
        .map((line) => line.split(" "))
        .find((fields) => fields[4] === "/");
      return {
        commandLine: readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1),
        uid: field("Uid"),
        gid: field("Gid"),
        effectiveCapabilities: field("CapEff")?.[0],
        boundingCapabilities: field("CapBnd")?.[0],
        noNewPrivileges: field("NoNewPrivs")?.[0],
        rootMountOptions: rootMount?.[5]?.split(","),
      };
    };

    const expectRestricted = (running: Awaited<ReturnType<typeof processOf>>) => {
      expect(running.uid).to.deep.equal(["65532", "65532", "65532", "65532"]);
      expect(running.gid).to.deep.equal(["65532", "65532", "65532", "65532"]);
      expect(running.effectiveCapabilities).to.equal("0000000000000000");
      expect(running.boundingCapabilities).to.equal("0000000000000000");
      expect(running.noNewPrivileges).to.equal("1");
      expect(running.rootMountOptions).to.include("ro");
    };

    /** The broken pod on the node is deleted by the ServiceAccount, and the repair counted on /metrics. */
    const expectRepaired = async (name: string) => {
      const plane = controlPlane();
      await waitFor("the delete", () => controllerDeletes(plane.auditLogPath, namespace).length === 1, {
        timeoutMs: 30_000,
      });
      const [deleted] = controllerDeletes(plane.auditLogPath, namespace);
      expect(deleted?.objectRef?.name).to.equal(name);
      expect(deleted?.responseStatus?.code).to.equal(200);
      expect(deleted?.user?.username).to.equal(`system:serviceaccount:${INSTALL.namespace}:${INSTALL.serviceAccount}`);
      await waitFor(
        "the repair on /metrics",
        async () =>
          (await controller?.metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" })) === 1,
      );
    };

    /** As the kubelet stops a container: the runtime signals its main process (node, PID 1 in the container). */
    const expectCleanStop = async (running: ControllerProcess) => {
      const signalled = Date.now();
      await podman.ok("kill", "--signal=SIGTERM", container);
      const code = await running.exited;
      const finished = Date.parse(await podman.ok("inspect", "--format", "{{.State.FinishedAt}}", container));
      expect(code).to.equal(0);
      expect(await podman.ok("inspect", "--format", "{{.State.ExitCode}}", container)).to.equal("0");
      expect(finished - signalled, "ms from SIGTERM to the container's exit").to.be.below(2_000);
    };

    it("cluster: takes the Lease, passes its checks, repairs a broken pod, serves /metrics, exits 0 within 2 s of SIGTERM", async () => {
      const { node } = await startInImage("cluster");
      expectRestricted(await processOf());
      const coordination = controlPlane().kubeConfig().makeApiClient(CoordinationV1Api);
      await waitFor(
        "the Lease",
        async () => {
          const lease = await coordination.readNamespacedLease({ namespace: INSTALL.namespace, name: "cni-repair" });
          return (lease.spec?.holderIdentity ?? "").startsWith(`${POD_NAME}_`);
        },
        { timeoutMs: 30_000 },
      );
      await createPodInState(api, { namespace, name: "broken", nodeName: node });
      await expectRepaired("broken");
      await expectCleanStop(controller as ControllerProcess);
    });

    it("per-node: runs the image's node without V8's memory reducer (its compiler flags set by the controller), repairs only its node's broken pod, exits 0 within 2 s of SIGTERM", async () => {
      const { command, node } = await startInImage("per-node");
      const running = await processOf();
      expectRestricted(running);
      // Only a flag that leaves the code caches valid: compiler flags there would cost them (bench/README.md).
      expect(command).to.deep.equal(["/usr/local/bin/node", "--no-memory-reducer", "/app/dist/src/cli/main.js"]);
      expect(running.commandLine.slice(0, 3)).to.deep.equal([
        "/usr/local/bin/node",
        "--no-memory-reducer",
        "/app/dist/src/cli/main.js",
      ]);
      expect(running.commandLine).to.include("run");
      await createPodInState(api, { namespace, name: "broken-elsewhere", nodeName: `${namespace}-b` });
      await createPodInState(api, { namespace, name: "broken", nodeName: node });
      await expectRepaired("broken");
      await expectCleanStop(controller as ControllerProcess);
      // Stopped after its own node's repair: the other node's broken pod was never its to touch.
      expect(
        controllerDeletes(controlPlane().auditLogPath, namespace).map((event) => event.objectRef?.name),
      ).to.deep.equal(["broken"]);
    });
  });
});
