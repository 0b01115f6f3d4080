// The one Service a pod of the real-node cluster dials: "kubernetes" in "default". The kubelet puts its ClusterIP and
// port into every container's env (KUBERNETES_SERVICE_HOST/PORT), where in-cluster clients such as cni-repair find
// the API server. With no kube-proxy here, a node holds the ClusterIP as a host address, on a link of its own that
// its cleanup removes (an empty bridge: this kernel has no dummy links), and a TCP proxy on it passes TLS through to
// the API server on loopback, whose self-signed certificate names the ClusterIP. Pods reach it over their default
// route to the node's bridge.
import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { CoreV1Api } from "@kubernetes/client-node";
import type { ControlPlane } from "../control-plane.js";
import { TcpProxy } from "../tcp-proxy.js";
import { removeLink } from "./node-cleanup.js";
import type { NodeLayout } from "./node-layout.js";

/**
 * A Service range of the cluster's own (--service-cluster-ip-range): its first address becomes the ClusterIP of
 * "kubernetes", a host address while the cluster runs, so two clusters on the machine rarely share one.
 */
export function serviceRange(): string {
  return `10.214.${randomInt(256)}.0/24`;
}

export class KubernetesService {
  readonly #proxy: TcpProxy;
  readonly #link: string;

  private constructor(proxy: TcpProxy, link: string) {
    this.#proxy = proxy;
    this.#link = link;
  }

  /** Serves the Service from this node: its ClusterIP on the node's service link, the proxy listening there. */
  static async start(plane: ControlPlane, layout: NodeLayout): Promise<KubernetesService> {
    const api = plane.kubeConfig().makeApiClient(CoreV1Api);
    const service = await api.readNamespacedService({ namespace: "default", name: "kubernetes" });
    const address = service.spec?.clusterIP;
    const port = service.spec?.ports?.[0]?.port;
    if (!address || !port)
      throw new Error(`Service default/kubernetes has no ClusterIP and port: ${JSON.stringify(service.spec)}`);
    const link = layout.serviceLink;
    try {
      execFileSync("ip", ["link", "add", link, "type", "bridge"], { stdio: "pipe" });
      execFileSync("ip", ["address", "add", `${address}/32`, "dev", link], { stdio: "pipe" });
      execFileSync("ip", ["link", "set", link, "up"], { stdio: "pipe" });
      const target = new URL(plane.server);
      const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) }, port, address);
      return new KubernetesService(proxy, link);
    } catch (error) {
      removeLink(link);
      throw error;
    }
  }

  async stop(): Promise<void> {
    await this.#proxy.close();
    removeLink(this.#link);
  }
}
