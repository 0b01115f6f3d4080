// A real, throw-away Kubernetes control plane (etcd + kube-apiserver) on loopback ports.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { forgetAuditLog } from "./audit-log.js";
import { controlPlaneBinaries } from "./binaries.js";
import { httpsGet } from "./https-get.js";
import { ManagedProcess } from "./managed-process.js";
import { destroyOnExit, ownedTempDir } from "./owned-dirs.js";
import { freePort } from "./ports.js";
import { waitFor } from "./wait.js";

const DIR_PREFIX = "cni-repair-cp-";
export const ADMIN_USER = "test-admin";

// Pod writes with the request body (DeleteOptions carry the preconditions), other pod calls as metadata; node
// writes (not their status) with the body, for the startup-taint tests.
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Request
    resources: [{ group: "", resources: ["pods", "pods/status", "pods/binding"] }]
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
  - level: Metadata
    resources: [{ group: "", resources: ["pods", "pods/status"] }]
  - level: Request
    resources: [{ group: "", resources: ["nodes"] }]
    verbs: ["create", "update", "patch", "delete"]
  - level: None
`;

export type ControlPlaneOptions = {
  /** Extra kube-apiserver flags, e.g. to tune the watch cache in a test. */
  readonly apiServerArgs?: readonly string[];
  readonly startTimeoutMs?: number;
  /**
   * Keep the ServiceAccount admission plugin on, as in a real cluster: only when a kube-controller-manager
   * creates the "default" ServiceAccount of each namespace (the e2e cluster), or every pod is rejected.
   */
  readonly serviceAccountAdmission?: boolean;
};

export class ControlPlane {
  readonly dir: string;
  readonly server: string;
  readonly adminToken: string;
  readonly kubeconfigPath: string;
  readonly auditLogPath: string;
  readonly #options: ControlPlaneOptions;
  readonly #etcdUrl: string;
  readonly #apiServerPort: number;
  #etcd: ManagedProcess | undefined;
  #apiServer: ManagedProcess | undefined;
  #caPem: string | undefined;
  #apiServerStarts = 0;
  /** Kills the servers and removes the directory if the process exits before stop(). */
  readonly #exitGuard = destroyOnExit(this);

  private constructor(dir: string, etcdUrl: string, apiServerPort: number, options: ControlPlaneOptions) {
    this.dir = dir;
    this.#etcdUrl = etcdUrl;
    this.#apiServerPort = apiServerPort;
    this.#options = options;
    this.server = `https://127.0.0.1:${apiServerPort}`;
    this.adminToken = randomBytes(24).toString("hex");
    this.kubeconfigPath = join(dir, "admin.kubeconfig");
    this.auditLogPath = join(dir, "audit.log");
  }

  /**
   * Starts etcd, then kube-apiserver, and waits for /readyz. Tears everything down if any step fails. A free port
   * can be taken by another process before a server binds it (freePort is racy): then it starts again on new ports.
   */
  static async start(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await ControlPlane.#startOnce(options);
      } catch (error) {
        if (
          attempt >= 3 ||
          !String(error instanceof Error ? `${error.message}${error.cause}` : error).includes("address already in use")
        )
          throw error;
      }
    }
  }

  static async #startOnce(options: ControlPlaneOptions): Promise<ControlPlane> {
    const binaries = controlPlaneBinaries();
    const dir = ownedTempDir(DIR_PREFIX);
    const [etcdClientPort, etcdPeerPort, apiServerPort] = [await freePort(), await freePort(), await freePort()];
    const plane = new ControlPlane(dir, `http://127.0.0.1:${etcdClientPort}`, apiServerPort, options);
    try {
      await plane.#startEtcd(binaries.etcd, etcdPeerPort, options.startTimeoutMs ?? 60_000);
      plane.#writeApiServerFiles();
      await plane.startApiServer(options.startTimeoutMs ?? 90_000);
      return plane;
    } catch (error) {
      await plane.stop();
      throw error;
    }
  }

  /** Process ids of the running servers, for tests of the teardown itself. */
  get pids(): number[] {
    return [this.#etcd?.pid, this.#apiServer?.pid].filter((pid): pid is number => pid !== undefined);
  }

  /** The API server's process id (the benchmarks read its CPU and memory from /proc). */
  get apiServerPid(): number {
    const pid = this.#apiServer?.pid;
    if (pid === undefined) throw new Error("the API server is not running");
    return pid;
  }

  /** PEM bundle that verifies the API server's self-signed serving certificate. */
  get caPem(): string {
    if (!this.#caPem) throw new Error("the API server has not started yet");
    return this.#caPem;
  }

  /** A client configuration for the given bearer token (the admin's when omitted). */
  kubeConfig(token = this.adminToken, user = ADMIN_USER): KubeConfig {
    const config = new KubeConfig();
    config.loadFromString(this.kubeconfigYaml(token, user));
    return config;
  }

  /** Kubeconfig text (JSON, which is YAML) for a bearer token; a context named "test". */
  kubeconfigYaml(token = this.adminToken, user = ADMIN_USER): string {
    return JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "test",
          cluster: { server: this.server, "certificate-authority-data": Buffer.from(this.caPem).toString("base64") },
        },
      ],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: "test", context: { cluster: "test", user } }],
      "current-context": "test",
    });
  }

  async #startEtcd(binary: string, peerPort: number, timeoutMs: number): Promise<void> {
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    this.#etcd = new ManagedProcess(
      "etcd",
      binary,
      [
        "--name=test",
        `--data-dir=${join(this.dir, "etcd")}`,
        `--listen-client-urls=${this.#etcdUrl}`,
        `--advertise-client-urls=${this.#etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=test=${peerUrl}`,
        // A throw-away store: durability buys nothing and fsync slows every write on shared disks.
        "--unsafe-no-fsync",
        "--quota-backend-bytes=8589934592",
        "--log-level=warn",
      ],
      join(this.dir, "etcd.log"),
    );
    const etcd = this.#etcd;
    await waitFor(
      "etcd /health",
      async () => {
        if (!etcd.running) throw new Error(`etcd exited:\n${etcd.logTail()}`);
        const response = await fetch(`${this.#etcdUrl}/health`);
        return response.ok && ((await response.json()) as { health?: string }).health === "true";
      },
      { timeoutMs, intervalMs: 100 },
    );
  }

  #writeApiServerFiles(): void {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    writeFileSync(join(this.dir, "sa.pub"), publicKey.export({ type: "spki", format: "pem" }));
    writeFileSync(join(this.dir, "sa.key"), privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    writeFileSync(join(this.dir, "tokens.csv"), `${this.adminToken},${ADMIN_USER},${ADMIN_USER},system:masters\n`, {
      mode: 0o600,
    });
    writeFileSync(join(this.dir, "audit-policy.yaml"), AUDIT_POLICY);
    mkdirSync(join(this.dir, "certs"), { recursive: true });
  }

  /** Starts (or restarts) kube-apiserver on its port against the running etcd and waits for /readyz. */
  async startApiServer(timeoutMs = 90_000): Promise<void> {
    if (this.#apiServer?.running) throw new Error("kube-apiserver is already running");
    const { kubeApiserver } = controlPlaneBinaries();
    this.#apiServerStarts++;
    const apiServer = new ManagedProcess(
      "kube-apiserver",
      kubeApiserver,
      [
        `--etcd-servers=${this.#etcdUrl}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${this.#apiServerPort}`,
        // With no serving certificate given it signs its own (and its CA) into this directory, once.
        `--cert-dir=${join(this.dir, "certs")}`,
        `--token-auth-file=${join(this.dir, "tokens.csv")}`,
        "--authorization-mode=RBAC",
        "--anonymous-auth=false",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${join(this.dir, "sa.pub")}`,
        `--service-account-signing-key-file=${join(this.dir, "sa.key")}`,
        "--service-cluster-ip-range=10.96.0.0/16",
        // Without a controller-manager no "default" ServiceAccounts appear, so this admission would reject every pod.
        ...(this.#options.serviceAccountAdmission === true ? [] : ["--disable-admission-plugins=ServiceAccount"]),
        "--allow-privileged=true",
        `--audit-policy-file=${join(this.dir, "audit-policy.yaml")}`,
        `--audit-log-path=${this.auditLogPath}`,
        "--audit-log-format=json",
        "--audit-log-mode=blocking",
        // Never rotated (its default rotates at 100 MB, which a whole run's shared log passes): a test waiting for
        // an entry, or counting none, must not look in a fresh file while the entry went into the rotated one.
        "--audit-log-maxsize=1000000",
        "--profiling=false",
        "--v=0",
        ...(this.#options.apiServerArgs ?? []),
      ],
      join(this.dir, `kube-apiserver.${this.#apiServerStarts}.log`),
    );
    this.#apiServer = apiServer;
    const servingCert = join(this.dir, "certs", "apiserver.crt");
    await waitFor(
      "kube-apiserver /readyz",
      async () => {
        if (!apiServer.running) throw new Error(`kube-apiserver exited:\n${apiServer.logTail()}`);
        if (!existsSync(servingCert)) return false;
        this.#caPem ??= readFileSync(servingCert, "utf8");
        const response = await httpsGet(`${this.server}/readyz`, this.#caPem, this.adminToken);
        return response.status === 200;
      },
      { timeoutMs, intervalMs: 200 },
    );
    if (!existsSync(this.kubeconfigPath)) writeFileSync(this.kubeconfigPath, this.kubeconfigYaml(), { mode: 0o600 });
  }

  /** Stops kube-apiserver only (SIGKILL by default, like a crash); etcd and the data stay. */
  async stopApiServer(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    await this.#apiServer?.stop(signal);
  }

  /** Compacts etcd at its current revision, so watches from any older resourceVersion get 410 Gone. */
  async compactEtcd(): Promise<number> {
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${this.#etcdUrl}${path}`, { method: "POST", body: JSON.stringify(body) });
      if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as { header?: { revision?: string } };
    };
    const { header } = await post("/v3/kv/range", { key: Buffer.from("/registry").toString("base64") });
    const revision = Number(header?.revision);
    await post("/v3/kv/compaction", { revision: String(revision), physical: true });
    return revision;
  }

  /** The API server's self-signed serving certificate and key (PEM files; the certificate is also its CA). */
  get servingCertFiles(): { cert: string; key: string } {
    return { cert: join(this.dir, "certs", "apiserver.crt"), key: join(this.dir, "certs", "apiserver.key") };
  }

  /** The key that signs service-account tokens (a controller-manager's token controller needs it too). */
  get serviceAccountKeyFile(): string {
    return join(this.dir, "sa.key");
  }

  /** The API server's loopback host and port, for proxies in front of it. */
  get apiServerAddress(): { host: string; port: number } {
    return { host: "127.0.0.1", port: this.#apiServerPort };
  }

  async restartApiServer(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    await this.stopApiServer(signal);
    await this.startApiServer();
  }

  /** Stops both servers and removes the directory. Safe to call twice. */
  async stop(): Promise<void> {
    await this.#apiServer?.stop();
    await this.#etcd?.stop();
    rmSync(this.dir, { recursive: true, force: true });
    forgetAuditLog(this.auditLogPath);
    this.#exitGuard.released();
  }

  /** For process exit handlers: kill without waiting, remove the directory. */
  destroyNow(): void {
    this.#apiServer?.killNow();
    this.#etcd?.killNow();
    rmSync(this.dir, { recursive: true, force: true });
    this.#exitGuard.released();
  }
}
