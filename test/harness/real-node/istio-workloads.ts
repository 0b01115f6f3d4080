// Meshed pods as Istio's sidecar injector leaves them when Istio's CNI is on (manifests/charts/istio-control/
// istio-discovery/files/injection-template.yaml of the pinned Istio): the sidecar.istio.io/status annotation, the
// istio-validation init container from the proxyv2 image with the injector's default arguments and security
// context, and a container named istio-proxy (Istio's plugin redirects only pods that have one). The proxy is a
// stand-in that idles: no istiod or Envoy is needed for the race, only the redirect the validator checks.
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
