// The istio validator's status as the real kubelet writes it (test/fixtures/kubelet), and as it moves on: each run
// that fails again becomes lastState with restartCount one higher, after the kubelet's back-off.
import { readFileSync } from "node:fs";
import type { V1ContainerStatus } from "@kubernetes/client-node";
import { repositoryFile } from "../harness/binaries.js";

type RecordedTermination = { exitCode: number; reason?: string; startedAt: string; finishedAt: string };
type RecordedStatus = {
  name: string;
  restartCount: number;
  state: { waiting?: { reason?: string; message?: string } };
  lastState: { terminated: RecordedTermination };
  image: string;
  imageID: string;
  ready: boolean;
};

/** The recorded pod (test/fixtures/kubelet/<file>) as the API server returned it. */
export function recordedPod(file: string): { status: { initContainerStatuses: unknown[] } } & Record<string, unknown> {
  return JSON.parse(readFileSync(repositoryFile(`test/fixtures/kubelet/${file}`), "utf8"));
}

/**
 * The validator's crash-loop status recorded in istio-validator-back-off.json (run 1 failed: lastState exit 126,
 * restartCount 1, CrashLoopBackOff), its times moved so that run 1 finished at `finishedAtMs` (its length kept).
 */
export function backOffStatus(finishedAtMs: number): V1ContainerStatus {
  const [recorded] = recordedPod("istio-validator-back-off.json").status.initContainerStatuses as [RecordedStatus];
  const { startedAt, finishedAt } = recorded.lastState.terminated;
  const ranMs = Date.parse(finishedAt) - Date.parse(startedAt);
  return {
    ...recorded,
    lastState: {
      terminated: {
        ...recorded.lastState.terminated,
        startedAt: new Date(finishedAtMs - ranMs),
        finishedAt: new Date(finishedAtMs),
      },
    },
  };
}

/** The status once the next run failed too: it started `backOffMs` after the last failure and failed 4 s later. */
export function nextRunFailed(status: V1ContainerStatus, backOffMs: number): V1ContainerStatus {
  const last = status.lastState?.terminated;
  if (last?.finishedAt === undefined) throw new Error("nextRunFailed: no failed run to follow");
  const startedAt = new Date(new Date(last.finishedAt).getTime() + backOffMs);
  return {
    ...status,
    restartCount: status.restartCount + 1,
    lastState: { terminated: { ...last, startedAt, finishedAt: new Date(startedAt.getTime() + 4_000) } },
  };
}
