// Meshed pods as Istio's sidecar injector leaves them when Istio's CNI is on (manifests/charts/istio-control/
// istio-discovery/files/injection-template.yaml of the pinned Istio): the sidecar.istio.io/status annotation, the
// istio-validation init container from the proxyv2 image with the injector's default arguments and security
// context, and a container named istio-proxy (Istio's plugin redirects only pods that have one). The proxy is a
// stand-in that idles: no istiod or Envoy is needed for the race, only the redirect the validator checks.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { V1Container, V1PodSpec, V1PodTemplateSpec } from "@kubernetes/client-node";
import type { IstioImages } from "./istio-images.js";
import type { RealNode } from "./real-node.js";

export const ISTIO_VALIDATOR = "istio-validation";

/** What the injector writes into sidecar.istio.io/status (its shape; the values of a default install). */
const SIDECAR_STATUS = JSON.stringify({
  initContainers: [ISTIO_VALIDATOR],
  containers: ["istio-proxy"],
  volumes: ["workload-socket", "credential-socket", "workload-certs", "istio-envoy", "istio-data", "istio-podinfo"],
  imagePullSecrets: null,
  revision: "default",
});

/** The injector's istio-validation container with Istio's CNI on, defaults everywhere (no annotations). */
function validator(images: IstioImages): V1Container {
  return {
    name: ISTIO_VALIDATOR,
    image: images.proxy.ref,
    imagePullPolicy: "Never",
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
    securityContext: {
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ["ALL"] },
      readOnlyRootFilesystem: true,
      runAsGroup: 1337,
      runAsNonRoot: true,
      runAsUser: 1337,
    },
  };
}

/** An idling container from the tests' mesh image (the app, and the stand-in for the proxy). */
function idler(node: RealNode, name: string): V1Container {
  return { name, image: node.images.mesh.ref, imagePullPolicy: "Never", command: ["/mesh/serve.sh"] };
}

export function istioPodSpec(node: RealNode, images: IstioImages): V1PodSpec {
  return {
    nodeSelector: { "kubernetes.io/hostname": node.name },
    automountServiceAccountToken: false,
    terminationGracePeriodSeconds: 1,
    initContainers: [validator(images)],
    containers: [idler(node, "app"), idler(node, "istio-proxy")],
  };
}

/** A Deployment's pod template for `app`, as injected. */
export function istioPodTemplate(node: RealNode, images: IstioImages, app: string): V1PodTemplateSpec {
  return {
    metadata: {
      labels: { app, "security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": app },
      annotations: { "sidecar.istio.io/status": SIDECAR_STATUS },
    },
    spec: istioPodSpec(node, images),
  };
}

/** The mount points of the node's pod network namespaces (containerd keeps them in its state directory). */
function podNetworkNamespaces(node: RealNode): string[] {
  const state = `${node.layout.containerdState}/`;
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .filter((point) => point.startsWith(state) && point.includes("/netns/"));
}

/**
 * Makes Istio's in-place repair fail for real on one pod: its address moves from the pod IP the API server reports
 * to another one, so Istio's repair, which finds a pod's network namespace by looking for an interface with that
 * pod IP among the node's processes (cni/pkg/repair/netns_linux.go), cannot find it. The validator still has an
 * address to start with and still fails with 126. Returns the network namespace changed.
 */
export function hidePodAddress(node: RealNode, podIp: string, replacement: string): string {
  for (const netns of podNetworkNamespaces(node)) {
    const addresses = execFileSync("nsenter", [`--net=${netns}`, "ip", "-o", "-4", "addr", "show", "dev", "eth0"], {
      encoding: "utf8",
    });
    const match = addresses.match(new RegExp(`inet (${podIp.replaceAll(".", "\\.")}/\\d+)`));
    if (!match?.[1]) continue;
    execFileSync("nsenter", [`--net=${netns}`, "ip", "addr", "add", `${replacement}/32`, "dev", "eth0"]);
    execFileSync("nsenter", [`--net=${netns}`, "ip", "addr", "del", match[1], "dev", "eth0"]);
    return netns;
  }
  throw new Error(`no pod network namespace on ${node.name} has ${podIp}`);
}
