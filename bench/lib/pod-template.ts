// Pods shaped like Istio-injected Deployment pods and the statuses a kubelet writes. The injected parts follow
// Istio's injection template (manifests/charts/istio-control/istio-discovery/files/injection-template.yaml, istio/istio
// at 86c9f01, Aug 2026) with the istio-cni chart on and default values: its annotations, the istio-validation init
// container with its iptables arguments and security context, the proxy's env (PROXY_CONFIG and ISTIO_META_*),
// probes, mounts and volumes.

import { createHash } from "node:crypto";

const SIDECAR_STATUS = JSON.stringify({
  initContainers: ["istio-validation"],
  containers: ["istio-proxy"],
  volumes: [
    "workload-socket",
    "credential-socket",
    "workload-certs",
    "istio-envoy",
    "istio-data",
    "istio-podinfo",
    "istio-token",
    "istiod-ca-cert",
    "istio-ca-crl",
  ],
  imagePullSecrets: null,
  revision: "default",
});
const PROXY_IMAGE = "docker.io/istio/proxyv2:1.24.2";
const TIME = "2025-03-04T10:15:00Z";

const fieldEnv = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });
const resourceEnv = (name: string, resource: string) => ({
  name,
  valueFrom: { resourceFieldRef: { resource, divisor: "1" } },
});
/** What the injector writes into PROXY_CONFIG for the default mesh config (protoToJSON of .ProxyConfig). */
const PROXY_CONFIG = `${JSON.stringify({
  discoveryAddress: "istiod.istio-system.svc:15012",
  proxyMetadata: {},
  tracing: { zipkin: { address: "zipkin.istio-system:9411" } },
  image: { imageType: "default" },
})}\n`;
const PROXY_RESOURCES = { limits: { cpu: "2", memory: "1Gi" }, requests: { cpu: "100m", memory: "128Mi" } };
/** The sidecar's own security context with CNI on (no NET_ADMIN: the CNI plugin writes the rules). */
const PROXY_SECURITY = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
  privileged: false,
  readOnlyRootFilesystem: true,
  runAsGroup: 1337,
  runAsNonRoot: true,
  runAsUser: 1337,
};
const env = (name: string, value: string) => ({ name, value });

function proxyContainer(app: string, namespace: string) {
  return {
    name: "istio-proxy",
    image: PROXY_IMAGE,
    args: [
      "proxy",
      "sidecar",
      "--domain",
      "$(POD_NAMESPACE).svc.cluster.local",
      "--proxyLogLevel=warning",
      "--proxyComponentLogLevel=misc:error",
      "--log_output_level=default:info",
    ],
    ports: [{ name: "http-envoy-prom", containerPort: 15090, protocol: "TCP" }],
    env: [
      env("PILOT_CERT_PROVIDER", "istiod"),
      env("CA_ADDR", "istiod.istio-system.svc:15012"),
      fieldEnv("POD_NAME", "metadata.name"),
      fieldEnv("POD_NAMESPACE", "metadata.namespace"),
      fieldEnv("INSTANCE_IP", "status.podIP"),
      fieldEnv("SERVICE_ACCOUNT", "spec.serviceAccountName"),
      fieldEnv("HOST_IP", "status.hostIP"),
      resourceEnv("ISTIO_CPU_LIMIT", "limits.cpu"),
      env("PROXY_CONFIG", PROXY_CONFIG),
      env("ISTIO_META_POD_PORTS", '[\n    {"containerPort":9080,"protocol":"TCP"}\n]'),
      env("ISTIO_META_APP_CONTAINERS", app),
      resourceEnv("GOMEMLIMIT", "limits.memory"),
      resourceEnv("GOMAXPROCS", "limits.cpu"),
      env("ISTIO_META_CLUSTER_ID", "Kubernetes"),
      fieldEnv("ISTIO_META_NODE_NAME", "spec.nodeName"),
      env("ISTIO_META_INTERCEPTION_MODE", "REDIRECT"),
      env("ISTIO_META_WORKLOAD_NAME", app),
      env("ISTIO_META_OWNER", `kubernetes://apis/apps/v1/namespaces/${namespace}/deployments/${app}`),
      env("ISTIO_META_MESH_ID", "cluster.local"),
      env("TRUST_DOMAIN", "cluster.local"),
    ],
    resources: PROXY_RESOURCES,
    readinessProbe: {
      httpGet: { path: "/healthz/ready", port: 15021, scheme: "HTTP" },
      initialDelaySeconds: 0,
      periodSeconds: 15,
      timeoutSeconds: 3,
      failureThreshold: 4,
    },
    startupProbe: {
      httpGet: { path: "/healthz/ready", port: 15021, scheme: "HTTP" },
      initialDelaySeconds: 0,
      periodSeconds: 1,
      timeoutSeconds: 3,
      failureThreshold: 600,
    },
    securityContext: PROXY_SECURITY,
    volumeMounts: [
      { name: "workload-socket", mountPath: "/var/run/secrets/workload-spiffe-uds" },
      { name: "credential-socket", mountPath: "/var/run/secrets/credential-uds" },
      { name: "workload-certs", mountPath: "/var/run/secrets/workload-spiffe-credentials" },
      { name: "istiod-ca-cert", mountPath: "/var/run/secrets/istio" },
      { name: "istio-ca-crl", mountPath: "/var/run/secrets/istio/crl" },
      { name: "istio-data", mountPath: "/var/lib/istio/data" },
      { name: "istio-envoy", mountPath: "/etc/istio/proxy" },
      { name: "istio-token", mountPath: "/var/run/secrets/tokens" },
      { name: "istio-podinfo", mountPath: "/etc/istio/pod" },
    ],
  };
}

/** A stable UUID-shaped id per name (each app's ReplicaSet gets its own owner UID). */
function uidOf(name: string): string {
  const hex = createHash("sha1").update(name).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The create body of one meshed pod of `app`, scheduled onto `node` and owned by the app's ReplicaSet. */
export function meshedPodBody(
  namespace: string,
  name: string,
  app: string,
  node: string,
  extraLabels: Record<string, string> = {},
): unknown {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace,
      labels: {
        app,
        version: "v1",
        "pod-template-hash": "7d9f8b6c5",
        "security.istio.io/tlsMode": "istio",
        "service.istio.io/canonical-name": app,
        "service.istio.io/canonical-revision": "v1",
        ...extraLabels,
      },
      annotations: {
        "istio.io/rev": "default",
        "kubectl.kubernetes.io/default-container": app,
        "kubectl.kubernetes.io/default-logs-container": app,
        "prometheus.io/path": "/stats/prometheus",
        "prometheus.io/port": "15020",
        "prometheus.io/scrape": "true",
        "sidecar.istio.io/interceptionMode": "REDIRECT",
        "sidecar.istio.io/status": SIDECAR_STATUS,
        "traffic.sidecar.istio.io/excludeInboundPorts": "15020",
        "traffic.sidecar.istio.io/includeInboundPorts": "*",
        "traffic.sidecar.istio.io/includeOutboundIPRanges": "*",
      },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: `${app}-7d9f8b6c5`,
          uid: uidOf(`${namespace}/${app}`),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: node,
      serviceAccountName: app,
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      initContainers: [
        {
          name: "istio-validation",
          image: PROXY_IMAGE,
          args: [
            "istio-iptables",
            "-p",
            "15001",
            "-z",
            "15006",
            "-u",
            "1337",
            "-m",
            "REDIRECT",
            "-i",
            "*",
            "-x",
            "",
            "-b",
            "*",
            "-d",
            "15090,15021,15020",
            "--log_output_level=default:info",
            "--run-validation",
            "--skip-rule-apply",
          ],
          resources: PROXY_RESOURCES,
          securityContext: PROXY_SECURITY,
        },
      ],
      containers: [
        {
          name: app,
          image: `registry.example.com/${app}:1.20.2`,
          ports: [{ containerPort: 9080, protocol: "TCP" }],
          env: [env("LOG_DIR", "/tmp/logs"), fieldEnv("POD_NAME", "metadata.name")],
          resources: { requests: { cpu: "50m", memory: "64Mi" } },
        },
        proxyContainer(app, namespace),
      ],
      volumes: [
        { name: "workload-socket", emptyDir: {} },
        { name: "credential-socket", emptyDir: {} },
        { name: "workload-certs", emptyDir: {} },
        { name: "istio-envoy", emptyDir: { medium: "Memory" } },
        { name: "istio-data", emptyDir: {} },
        {
          name: "istio-podinfo",
          downwardAPI: {
            items: [
              { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
              { path: "annotations", fieldRef: { fieldPath: "metadata.annotations" } },
            ],
          },
        },
        {
          name: "istio-token",
          projected: {
            sources: [{ serviceAccountToken: { audience: "istio-ca", expirationSeconds: 43200, path: "istio-token" } }],
          },
        },
        { name: "istiod-ca-cert", configMap: { name: "istio-ca-root-cert" } },
        { name: "istio-ca-crl", configMap: { name: "istio-ca-crl", optional: true } },
      ],
    },
  };
}

const terminated = (exitCode: number) => ({
  exitCode,
  reason: exitCode === 0 ? "Completed" : "Error",
  startedAt: TIME,
  finishedAt: TIME,
  containerID: "containerd://9f1c0d2e3b4a59687f8e9d0c1b2a3948576a6b5c4d3e2f1a0b9c8d7e6f5a4b3c",
});

const running = (name: string, image: string, restartCount = 0) => ({
  name,
  image,
  imageID: `${image}@sha256:4b5e2a3c1d0f9e8d7c6b5a49382716f5e4d3c2b1a09f8e7d6c5b4a3928170f6e`,
  containerID: "containerd://0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
  ready: true,
  started: true,
  restartCount,
  state: { running: { startedAt: TIME } },
  lastState: {},
});

const condition = (type: string, status: string, at = TIME) => ({
  type,
  status,
  lastProbeTime: null,
  lastTransitionTime: at,
});

function ip(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

/** A running, ready pod whose validator passed. `readyAt` varies the Ready condition for churn. */
export function healthyStatus(app: string, i: number, readyAt = TIME): unknown {
  return {
    phase: "Running",
    hostIP: "172.18.0.2",
    hostIPs: [{ ip: "172.18.0.2" }],
    podIP: ip(i),
    podIPs: [{ ip: ip(i) }],
    qosClass: "Burstable",
    startTime: TIME,
    conditions: [
      condition("PodReadyToStartContainers", "True"),
      condition("Initialized", "True"),
      condition("Ready", "True", readyAt),
      condition("ContainersReady", "True", readyAt),
      condition("PodScheduled", "True"),
    ],
    initContainerStatuses: [
      {
        name: "istio-validation",
        image: PROXY_IMAGE,
        imageID: `${PROXY_IMAGE}@sha256:abc`,
        ready: true,
        started: false,
        restartCount: 0,
        state: { terminated: terminated(0) },
        lastState: {},
      },
    ],
    containerStatuses: [running(app, `registry.example.com/${app}:1.20.2`), running("istio-proxy", PROXY_IMAGE)],
  };
}

/** Init:CrashLoopBackOff: istio-validation last exited 126 (no traffic redirection). */
export function brokenStatus(app: string): unknown {
  const waiting = (name: string, image: string) => ({
    name,
    image,
    imageID: "",
    ready: false,
    started: false,
    restartCount: 0,
    state: { waiting: { reason: "PodInitializing" } },
    lastState: {},
  });
  return {
    phase: "Pending",
    conditions: [
      condition("Initialized", "False"),
      condition("Ready", "False"),
      condition("ContainersReady", "False"),
      condition("PodScheduled", "True"),
    ],
    initContainerStatuses: [
      {
        name: "istio-validation",
        image: PROXY_IMAGE,
        imageID: `${PROXY_IMAGE}@sha256:abc`,
        ready: false,
        started: false,
        restartCount: 3,
        state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 40s restarting failed container" } },
        lastState: { terminated: terminated(126) },
      },
    ],
    containerStatuses: [waiting(app, `registry.example.com/${app}:1.20.2`), waiting("istio-proxy", PROXY_IMAGE)],
  };
}

/** A readiness flap as the kubelet reports it: only the conditions change (one MODIFIED event per write). */
export function readinessChurn(readyAt: string): unknown {
  return {
    status: {
      conditions: [
        condition("PodReadyToStartContainers", "True"),
        condition("Initialized", "True"),
        condition("Ready", "True", readyAt),
        condition("ContainersReady", "True", readyAt),
        condition("PodScheduled", "True"),
      ],
    },
  };
}
