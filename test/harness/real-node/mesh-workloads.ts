// The workloads of the real-node tests, built from the test images: the mesh's CNI agent DaemonSet, whose
// readiness probe follows the node's agent switch, and meshed pods whose validator init container checks the
// redirect for real (Istio's name and exit code 126, or Linkerd's and 95).
import type { V1Container, V1DaemonSet, V1PodSpec, V1PodTemplateSpec } from "@kubernetes/client-node";
import type { RealNode } from "./real-node.js";

/** The label the Istio preset's agent selector matches (k8s-app=istio-cni-node), and the DaemonSet's name. */
export const ISTIO_AGENT = "istio-cni-node";

export type ValidatorMesh = "istio" | "linkerd";
/** Each mesh's validator and the mark its injector leaves on a meshed pod (what the presets look for). */
const VALIDATORS: Record<
  ValidatorMesh,
  { name: string; exitCode: number; mark: { annotations?: Record<string, string>; labels?: Record<string, string> } }
> = {
  istio: { name: "istio-validation", exitCode: 126, mark: { annotations: { "sidecar.istio.io/status": "{}" } } },
  linkerd: {
    name: "linkerd-network-validator",
    exitCode: 95,
    mark: { labels: { "linkerd.io/control-plane-ns": "linkerd" } },
  },
};

function container(node: RealNode, name: string, command: string[]): V1Container {
  // Never pulled: there is no registry; the image was imported into the node's containerd.
  return { name, image: node.images.mesh.ref, imagePullPolicy: "Never", command };
}

/**
 * The node's CNI agent: Ready exactly while the node's switch is on (an exec probe on the switch file, every
 * second). One DaemonSet per node, held to it, because each node's switch is in that node's own directory.
 */
export function agentDaemonSet(node: RealNode): V1DaemonSet {
  const labels = { "k8s-app": ISTIO_AGENT };
  const perNode = { ...labels, "cni-repair.test/node": node.name };
  return {
    metadata: { name: `${ISTIO_AGENT}-${node.layout.id.toLowerCase()}`, labels },
    spec: {
      selector: { matchLabels: perNode },
      template: {
        metadata: { labels: perNode },
        spec: {
          nodeSelector: { "kubernetes.io/hostname": node.name },
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 1,
          tolerations: [{ operator: "Exists" }],
          containers: [
            {
              ...container(node, "install-cni", ["/mesh/serve.sh"]),
              volumeMounts: [{ name: "switch", mountPath: "/switch", readOnly: true }],
              readinessProbe: {
                exec: { command: ["/bin/test", "-f", "/switch/agent-ready"] },
                periodSeconds: 1,
                // Not the default 1 s: under load an exec can take longer, and a timed-out probe would flap the
                // agent NotReady (and move its Ready time) with the switch unchanged.
                timeoutSeconds: 10,
                failureThreshold: 1,
                successThreshold: 1,
              },
            },
          ],
          volumes: [{ name: "switch", hostPath: { path: node.layout.agentSwitchDir, type: "Directory" } }],
        },
      },
    },
  };
}

/** A meshed pod's spec: the validator, then the app (both from the mesh image). */
export function meshedPodSpec(
  node: RealNode,
  options: { mesh?: ValidatorMesh; restartPolicy?: "Always" | "Never" } = {},
): V1PodSpec {
  const validator = VALIDATORS[options.mesh ?? "istio"];
  return {
    // The only node; its name also keeps the pods off any other.
    nodeSelector: { "kubernetes.io/hostname": node.name },
    automountServiceAccountToken: false,
    terminationGracePeriodSeconds: 1,
    ...(options.restartPolicy && { restartPolicy: options.restartPolicy }),
    initContainers: [container(node, validator.name, ["/mesh/validate.sh", String(validator.exitCode)])],
    containers: [container(node, "app", ["/mesh/serve.sh"])],
  };
}

/** The template the mesh's injector would leave: its marker annotation, the validator, the app. */
export function meshedPodTemplate(node: RealNode, app: string, mesh: ValidatorMesh = "istio"): V1PodTemplateSpec {
  return { metadata: meshMark(mesh, { app }), spec: meshedPodSpec(node, { mesh }) };
}

/** A meshed pod's metadata: the mesh's mark and these labels. */
export function meshMark(
  mesh: ValidatorMesh,
  labels: Record<string, string>,
): { labels: Record<string, string>; annotations?: Record<string, string> } {
  const { mark } = VALIDATORS[mesh];
  return { labels: { ...labels, ...mark.labels }, ...(mark.annotations && { annotations: mark.annotations }) };
}
