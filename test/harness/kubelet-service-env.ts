// The variables the kubelet puts into a container for Services (pkg/kubelet/envvars, kubelet_pods.go's
// getServiceEnvVarMap): always the API server's Service ("kubernetes" in "default"), and with the pod's
// enableServiceLinks (true unless set false) every Service of the pod's namespace that has a ClusterIP. What a pod of a
// test is given here is made from the real Services the API server holds, their ClusterIPs as it assigned them.
import type { CoreV1Api, V1Pod, V1Service } from "@kubernetes/client-node";

const envName = (name: string) => name.toUpperCase().replaceAll("-", "_");

/** One Service's variables, as the kubelet writes them (none for a headless Service). */
export function serviceEnv(service: V1Service): Record<string, string> {
  const ip = service.spec?.clusterIP;
  const ports = service.spec?.ports ?? [];
  const first = ports[0];
  if (!ip || ip === "None" || !first) return {};
  const svc = envName(service.metadata?.name ?? "");
  const hostPort = (port: number) => `${ip.includes(":") ? `[${ip}]` : ip}:${port}`;
  const env: Record<string, string> = {
    [`${svc}_SERVICE_HOST`]: ip,
    [`${svc}_SERVICE_PORT`]: String(first.port),
  };
  ports.forEach((port, index) => {
    if (port.name) env[`${svc}_SERVICE_PORT_${envName(port.name)}`] = String(port.port);
    const protocol = port.protocol ?? "TCP";
    const url = `${protocol.toLowerCase()}://${hostPort(port.port)}`;
    if (index === 0) env[`${svc}_PORT`] = url;
    const prefix = `${svc}_PORT_${port.port}_${protocol.toUpperCase()}`;
    Object.assign(env, {
      [prefix]: url,
      [`${prefix}_PROTO`]: protocol.toLowerCase(),
      [`${prefix}_PORT`]: String(port.port),
      [`${prefix}_ADDR`]: ip,
    });
  });
  return env;
}

/** Every Service variable the kubelet would give the pod's containers. */
export async function kubeletServiceEnv(api: CoreV1Api, pod: V1Pod): Promise<Record<string, string>> {
  const namespace = pod.metadata?.namespace ?? "default";
  const master = await api.readNamespacedService({ namespace: "default", name: "kubernetes" });
  const linked = pod.spec?.enableServiceLinks === false ? [] : (await api.listNamespacedService({ namespace })).items;
  return Object.assign({}, ...linked.map(serviceEnv), serviceEnv(master)) as Record<string, string>;
}
