// A realistic Istio-injected Pod as the API server returns it, stuck on istio-validation exit 126.
// Hand-written, and a synthetic edge case where it differs from what a real kubelet writes (compare
// test/fixtures/kubelet/istio-validator-back-off.json, recorded from one): its extra owner, its second init
// container and three app containers exercise the filtering; its termination `message` is one only a validator
// with terminationMessagePolicy FallbackToLogsOnError (or writing /dev/termination-log) produces, which the rules
// with messageContains need; a real status also has the PodReadyToStartContainers condition, `started`,
// `resources`, hostIPs/podIPs, and a back-off message naming the container and pod.

const sidecarStatus = JSON.stringify({
  initContainers: ["istio-validation"],
  containers: ["istio-proxy"],
  volumes: ["workload-socket", "credential-socket", "workload-certs", "istio-envoy", "istio-data", "istio-podinfo"],
  imagePullSecrets: null,
  revision: "default",
});

const managedField = (manager: string, operation: string, subresource?: string) => ({
  manager,
  operation,
  apiVersion: "v1",
  time: "2025-03-04T10:15:02Z",
  fieldsType: "FieldsV1",
  fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:app": {} } }, "f:status": { "f:conditions": {} } },
  ...(subresource === undefined ? {} : { subresource }),
});

/** A fresh copy each call, so tests can change it freely. */
export function istioPodJson() {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "reviews-v1-7d9f8b6c5-x2x4q",
      generateName: "reviews-v1-7d9f8b6c5-",
      namespace: "bookinfo",
      uid: "0b5c3f6e-6a43-4c59-9d1f-1d1c7a0c9e01",
      resourceVersion: "4711023",
      creationTimestamp: "2025-03-04T10:15:00Z",
      labels: {
        app: "reviews",
        version: "v1",
        "pod-template-hash": "7d9f8b6c5",
        "security.istio.io/tlsMode": "istio",
        "service.istio.io/canonical-name": "reviews",
        "service.istio.io/canonical-revision": "v1",
        "app.kubernetes.io/part-of": "bookinfo",
      },
      annotations: {
        "istio.io/rev": "default",
        "kubectl.kubernetes.io/default-container": "reviews",
        "kubectl.kubernetes.io/default-logs-container": "reviews",
        "prometheus.io/path": "/stats/prometheus",
        "prometheus.io/port": "15020",
        "prometheus.io/scrape": "true",
        "sidecar.istio.io/status": sidecarStatus,
      },
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: "reviews-config", uid: "9e1d4c1a-0000-4000-8000-000000000001" },
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "reviews-v1-7d9f8b6c5",
          uid: "5a0e0e3c-2b7b-4c53-8f0f-3f4d3a1f1d11",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        managedField("kube-controller-manager", "Update"),
        managedField("kubelet", "Update", "status"),
        managedField("pilot-discovery", "Update"),
      ],
    },
    spec: {
      nodeName: "node-a",
      restartPolicy: "Always",
      serviceAccountName: "bookinfo-reviews",
      terminationGracePeriodSeconds: 30,
      initContainers: [
        {
          name: "istio-validation",
          image: "docker.io/istio/proxyv2:1.24.2",
          args: ["istio-iptables", "-p", "15001", "-z", "15006", "--run-validation", "--skip-rule-apply"],
          securityContext: { runAsUser: 1337, runAsGroup: 1337, runAsNonRoot: true },
        },
        { name: "migrate-db", image: "example.com/reviews-migrate:1.0" },
      ],
      containers: [
        {
          name: "reviews",
          image: "docker.io/istio/examples-bookinfo-reviews-v1:1.20.2",
          ports: [{ containerPort: 9080 }],
        },
        { name: "istio-proxy", image: "docker.io/istio/proxyv2:1.24.2", args: ["proxy", "sidecar"] },
        { name: "log-shipper", image: "example.com/fluent-bit:3.1" },
      ],
      volumes: [
        { name: "istio-envoy", emptyDir: { medium: "Memory" } },
        { name: "istio-data", emptyDir: {} },
      ],
    },
    status: {
      phase: "Pending",
      hostIP: "10.0.0.11",
      podIP: "10.244.1.23",
      qosClass: "Burstable",
      startTime: "2025-03-04T10:15:00Z",
      conditions: [
        {
          type: "Initialized",
          status: "False",
          reason: "ContainersNotInitialized",
          lastTransitionTime: "2025-03-04T10:15:00Z",
        },
        { type: "Ready", status: "False", reason: "ContainersNotReady", lastTransitionTime: "2025-03-04T10:15:00Z" },
      ],
      initContainerStatuses: [
        {
          name: "istio-validation",
          image: "docker.io/istio/proxyv2:1.24.2",
          imageID: "docker.io/istio/proxyv2@sha256:abc",
          containerID: "containerd://1111",
          ready: false,
          restartCount: 4,
          started: false,
          state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 1m20s restarting failed container" } },
          lastState: {
            terminated: {
              exitCode: 126,
              reason: "Error",
              message: "Error: iptables validation failed; workload traffic not redirected",
              startedAt: "2025-03-04T10:16:40Z",
              finishedAt: "2025-03-04T10:16:45Z",
              containerID: "containerd://1111",
            },
          },
        },
        {
          name: "migrate-db",
          image: "example.com/reviews-migrate:1.0",
          imageID: "",
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: "PodInitializing" } },
          lastState: {},
        },
      ],
      containerStatuses: ["reviews", "istio-proxy", "log-shipper"].map((name) => ({
        name,
        image: "x",
        imageID: "",
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: "PodInitializing" } },
        lastState: {},
      })),
    },
  };
}
