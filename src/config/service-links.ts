// Kubernetes' service links: the kubelet gives every container variables for each Service of its namespace (unless
// the pod sets enableServiceLinks: false), named after the Service, upper-cased with "-" as "_". The chart's metrics
// Service cni-repair-metrics gives a Job next to it CNI_REPAIR_METRICS_SERVICE_HOST, …_PORT and so on: not settings
// of ours, so the environment check must not refuse them. What the kubelet writes for a Service SVC with ClusterIP
// IP (pkg/kubelet/envvars):
//   SVC_SERVICE_HOST=IP                 SVC_SERVICE_PORT=port (first)      SVC_SERVICE_PORT_<NAME>=port (named ones)
//   SVC_PORT=proto://IP:port (first)    SVC_PORT_<port>_<PROTO>=proto://IP:port
//   SVC_PORT_<port>_<PROTO>_PROTO=proto SVC_PORT_<port>_<PROTO>_PORT=port  SVC_PORT_<port>_<PROTO>_ADDR=IP
// A variable counts as a service link only with that shape of name AND of value, and only beside its Service's
// SVC_SERVICE_HOST holding an IP (the kubelet writes none for a headless Service), so a misspelt setting such as
// CNI_REPAIR_HTP_PORT=9090 is still refused.
import { isIP } from "node:net";

const PORT = /^[1-9]\d{0,4}$/;
const PROTOCOLS = ["tcp", "udp", "sctp"];

/** An IP as the kubelet joins it with a port (net.JoinHostPort: IPv6 in brackets). */
const hostPort = (ip: string, port: string) => `${ip.includes(":") ? `[${ip}]` : ip}:${port}`;

/** Whether `value` is what the kubelet writes into `suffix` (the name after "SVC_") for a Service at `ip`. */
function fitsSuffix(suffix: string, value: string, ip: string): boolean {
  if (suffix === "SERVICE_HOST") return value === ip;
  if (suffix === "SERVICE_PORT" || /^SERVICE_PORT_[A-Z0-9_]+$/.test(suffix)) return PORT.test(value);
  const url = (proto: string, port: string) => value === `${proto}://${hostPort(ip, port)}`;
  if (suffix === "PORT") {
    const port = value.slice(value.lastIndexOf(":") + 1);
    return PORT.test(port) && PROTOCOLS.some((proto) => url(proto, port));
  }
  const link = /^PORT_([1-9]\d{0,4})_(TCP|UDP|SCTP)(?:_(PROTO|PORT|ADDR))?$/.exec(suffix);
  if (!link) return false;
  const [, port = "", protocol = "", field] = link;
  const proto = protocol.toLowerCase();
  if (field === "PROTO") return value === proto;
  if (field === "PORT") return value === port;
  if (field === "ADDR") return value === ip;
  return url(proto, port);
}

/** The names among `env` that are a Service's link variables, as the kubelet writes them. */
export function serviceLinkNames(env: Record<string, string | undefined>): Set<string> {
  const services = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    const service = /^([A-Z0-9_]+)_SERVICE_HOST$/.exec(name)?.[1];
    if (service !== undefined && value !== undefined && isIP(value) !== 0) services.set(service, value);
  }
  const links = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    for (const [service, ip] of services) {
      if (name.startsWith(`${service}_`) && fitsSuffix(name.slice(service.length + 1), value, ip)) links.add(name);
    }
  }
  return links;
}
