// The pod statuses the integration tests write by hand keep the structure of statuses a real kubelet wrote
// (test/fixtures/kubelet, recorded by `make fixtures-kubelet`), or are listed below as a synthetic edge case with the
// reason. Structure: every field path, the type of each leaf, and the value of the fields that name a state (`type`,
// `reason`, `status`). A hand-written status may leave out only the fields in LEFT_OUT, and may add none.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { crashLoopingApp, runningApp, sandboxReadyCondition } from "../../harness/ambient-pods.js";
import { repositoryFile } from "../../harness/binaries.js";
import { agentReadyCondition } from "../../harness/cni-agents.js";
import { completedContainer, validatorStatus } from "../../harness/pod-fixtures.js";

type Recorded = {
  readonly file: string;
  readonly pick: (status: RecordedStatus) => unknown;
};
type RecordedStatus = {
  readonly conditions: { readonly type: string }[];
  readonly initContainerStatuses: unknown[];
  readonly containerStatuses: unknown[];
};

const initStatus = (file: string): Recorded => ({ file, pick: (status) => status.initContainerStatuses[0] });
const appStatus = (file: string): Recorded => ({ file, pick: (status) => status.containerStatuses[0] });
const condition = (file: string, type: string): Recorded => ({
  file,
  pick: (status) => status.conditions.find((c) => c.type === type),
});

/** Fields of a real status the hand-written ones leave out, and why that cannot change what the tests exercise. */
const LEFT_OUT: Record<string, string> = {
  containerID: "the runtime's id of a container: the harness runs none, and detection reads none",
  "state.terminated.containerID": "as containerID",
  "lastState.terminated.containerID": "as containerID",
  resources: "the kubelet's view of the container's resources: not read by the controller",
  observedGeneration: "the kubelet's bookkeeping of the pod spec it saw: not read by the controller",
  lastProbeTime: "always null in a kubelet's pod conditions",
};

/** What each hand-written status is checked against: a recorded status of the same state, or why there is none. */
const HAND_WRITTEN: {
  readonly what: string;
  readonly status: unknown;
  readonly like: Recorded | { synthetic: string };
}[] = [
  {
    what: "validator in Init:CrashLoopBackOff (pod-fixtures validatorStatus crashloop; broken-pods, cni-simulator)",
    status: validatorStatus("istio-validation", { kind: "crashloop", exitCode: 126 }),
    like: initStatus("istio-validator-back-off.json"),
  },
  {
    what: "the same, with its restart count and finish time given (istio-repair.test.ts)",
    status: validatorStatus("istio-validation", {
      kind: "crashloop",
      exitCode: 126,
      restarts: 4,
      finishedAt: new Date(),
    }),
    like: initStatus("istio-validator-back-off.json"),
  },
  {
    what: "linkerd's validator in back-off",
    status: validatorStatus("linkerd-network-validator", { kind: "crashloop", exitCode: 95 }),
    like: initStatus("linkerd-validator-back-off.json"),
  },
  {
    what: "validator failed under restartPolicy Never (validatorStatus failed)",
    status: validatorStatus("istio-validation", { kind: "failed", exitCode: 126 }),
    like: initStatus("istio-never-failed.json"),
  },
  {
    what: "validator passed (validatorStatus succeeded)",
    status: validatorStatus("istio-validation", { kind: "succeeded" }),
    like: initStatus("istio-healthy.json"),
  },
  {
    what: "a container that ran to completion (pod-fixtures completedContainer; repair-cronjob.test.ts)",
    status: completedContainer("cni-repair", "registry.invalid/cni-repair:1"),
    like: initStatus("istio-healthy.json"),
  },
  {
    what: "app container running (ambient-pods runningApp)",
    status: runningApp(new Date(), false),
    like: appStatus("istio-healthy.json"),
  },
  {
    what: "app container whose run ended (ambient-pods runningApp, finished)",
    status: runningApp(new Date(), true),
    // A container that ran and exited: the same structure as the validator's failed run.
    like: initStatus("istio-never-failed.json"),
  },
  {
    what: "app container in CrashLoopBackOff (ambient-pods crashLoopingApp)",
    status: crashLoopingApp(2, new Date()),
    // A container in back-off after a failed run: the same structure whether it is an init container or not.
    like: initStatus("istio-validator-back-off.json"),
  },
  {
    what: "the sandbox set up (ambient-pods sandboxReadyCondition)",
    status: sandboxReadyCondition(new Date()),
    like: condition("istio-healthy.json", "PodReadyToStartContainers"),
  },
  {
    what: "a CNI agent Ready (cni-agents agentReadyCondition)",
    status: agentReadyCondition(new Date()),
    like: condition("istio-healthy.json", "Ready"),
  },
  {
    what: "a CNI agent NotReady (cni-agents agentReadyCondition)",
    status: agentReadyCondition(undefined),
    like: condition("istio-validator-back-off.json", "Ready"),
  },
  {
    what: 'a CNI agent Ready with no lastTransitionTime (cni-agents agentReadyCondition "no time")',
    status: agentReadyCondition("no time"),
    like: {
      synthetic:
        "no kubelet writes a condition without a time; the readiness gate's fail-safe (count from its own sighting) " +
        "is tested with it (agent-outage.test.ts, guards.test.ts)",
    },
  },
];

/** The fields whose value names a state, kept in the structure. */
const NAMING = new Set(["type", "reason", "status"]);

/** Every leaf path with its type (or its value, for NAMING fields); an empty object is a leaf. */
function structure(value: unknown, path = ""): string[] {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return [`${path}: {}`];
    return entries.flatMap(([key, child]) => structure(child, path === "" ? key : `${path}.${key}`));
  }
  const key = path.split(".").at(-1) ?? "";
  if (NAMING.has(key) && typeof value === "string") return [`${path} = ${value}`];
  return [`${path}: ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}`];
}

const pathOf = (leaf: string) => leaf.split(/: | = /)[0] ?? leaf;

function recorded(like: Recorded): unknown {
  const pod = JSON.parse(readFileSync(repositoryFile(`test/fixtures/kubelet/${like.file}`), "utf8")) as {
    status: RecordedStatus;
  };
  const status = like.pick(pod.status);
  if (status === undefined) throw new Error(`${like.file}: no such status`);
  return status;
}

describe("hand-written pod statuses against the ones a real kubelet wrote", () => {
  for (const { what, status, like } of HAND_WRITTEN) {
    if ("synthetic" in like) {
      it(`${what}: a synthetic edge case, with its reason`, () => {
        expect(like.synthetic).to.have.length.above(20);
      });
      continue;
    }
    it(`${what}: the structure of ${like.file}`, () => {
      // Through JSON, as the API server stores it: a Date is a string.
      const handWritten = new Set(structure(JSON.parse(JSON.stringify(status))));
      const real = new Set(structure(recorded(like)));
      const invented = [...handWritten].filter((leaf) => !real.has(leaf));
      const missing = [...real].filter((leaf) => !handWritten.has(leaf) && LEFT_OUT[pathOf(leaf)] === undefined);
      expect({ invented, missing }).to.deep.equal({ invented: [], missing: [] });
    });
  }

  it("the integration tests write statuses only through these builders", () => {
    const builders = new Set(["pod-fixtures.ts", "ambient-pods.ts", "cni-agents.ts"]);
    // A container state or a pod condition written as a literal anywhere else.
    const literal =
      /\b(?:waiting|running|terminated):\s*\{|\btype:\s*"(?:Ready|PodReadyToStartContainers|Initialized|ContainersReady)"/;
    const offenders: string[] = [];
    let scanned = 0;
    // The sources, not their build in dist/ (which repositoryFile would find first).
    const repository = dirname(repositoryFile("package.json"));
    for (const dir of ["test/harness", "test/integration"]) {
      const root = join(repository, dir);
      for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
        if (!file.endsWith(".ts") || builders.has(file)) continue;
        scanned++;
        const lines = readFileSync(join(root, file), "utf8").split("\n");
        lines.forEach((line, i) => {
          if (literal.test(line)) offenders.push(`${dir}/${file}:${i + 1}: ${line.trim()}`);
        });
      }
    }
    expect(scanned, "source files read").to.be.above(50);
    expect(offenders).to.deep.equal([]);
  });
});
