// `podman run` flags that give a container what the kubelet would give it from its pod spec. A securityContext
// field or volume this does not translate is an error, so a manifest change cannot be silently left out.
import type { V1Container, V1PodSpec } from "@kubernetes/client-node";

const HANDLED_CONTAINER_FIELDS = new Set([
  "allowPrivilegeEscalation",
  "capabilities",
  "privileged",
  "readOnlyRootFilesystem",
  "runAsGroup",
  "runAsNonRoot",
  "runAsUser",
  "seccompProfile",
]);
const HANDLED_POD_FIELDS = new Set(["runAsGroup", "runAsNonRoot", "runAsUser", "seccompProfile"]);

function refuseUnhandled(what: string, fields: object | undefined, handled: Set<string>): void {
  const unhandled = Object.entries(fields ?? {}).filter(([key, value]) => value !== undefined && !handled.has(key));
  if (unhandled.length > 0) throw new Error(`${what}: ${unhandled.map(([key]) => key).join(", ")} not translated`);
}

export function kubeletRunFlags(pod: V1PodSpec, container: V1Container): string[] {
  const podContext = pod.securityContext;
  const context = container.securityContext;
  refuseUnhandled("pod securityContext", podContext, HANDLED_POD_FIELDS);
  refuseUnhandled("container securityContext", context, HANDLED_CONTAINER_FIELDS);
  const flags: string[] = [];

  const user = context?.runAsUser ?? podContext?.runAsUser;
  const group = context?.runAsGroup ?? podContext?.runAsGroup;
  if (user !== undefined) flags.push(`--user=${user}${group === undefined ? "" : `:${group}`}`);
  if ((context?.runAsNonRoot ?? podContext?.runAsNonRoot) && user === 0) throw new Error("runAsNonRoot with user 0");
  // The kubelet mounts nothing writable unless asked: podman's default tmpfs mounts on a read-only root stay off.
  if (context?.readOnlyRootFilesystem) flags.push("--read-only", "--read-only-tmpfs=false");
  if (context?.privileged) flags.push("--privileged");
  if (context?.allowPrivilegeEscalation === false) flags.push("--security-opt=no-new-privileges");
  for (const capability of context?.capabilities?.drop ?? []) flags.push(`--cap-drop=${capability.toLowerCase()}`);
  for (const capability of context?.capabilities?.add ?? []) flags.push(`--cap-add=${capability.toLowerCase()}`);
  const seccomp = context?.seccompProfile?.type ?? podContext?.seccompProfile?.type;
  if (seccomp === "Unconfined") flags.push("--security-opt=seccomp=unconfined");
  else if (seccomp !== undefined && seccomp !== "RuntimeDefault") throw new Error(`seccomp profile ${seccomp}`);

  // A container's command replaces the image's entry point (its args, the image's CMD, follow the image name).
  if (container.command?.length) flags.push(`--entrypoint=${JSON.stringify(container.command)}`);

  for (const mount of container.volumeMounts ?? []) {
    const volume = (pod.volumes ?? []).find((candidate) => candidate.name === mount.name);
    if (!volume?.emptyDir) throw new Error(`volume ${mount.name}: only emptyDir volumes are translated`);
    flags.push(`--tmpfs=${mount.mountPath}:rw,nosuid,nodev`);
  }
  return flags;
}
