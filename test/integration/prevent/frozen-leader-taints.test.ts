// Issue 34: a leader frozen (SIGSTOP) with a startup taint due, and resumed after the replica that led meanwhile
// tainted the node and untainted it again, must make no Node write that succeeds. Its caches still show the node
// as it was before the freeze; the taints then were the same as now (ABA), so a patch that tests only the taints
// would go through and put the taint back. Two controller processes with leader election, as an operator runs
// them; the API server's audit log is the judge.
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { nodeWrites } from "../../harness/audit-log.js";
import { agentName, createCniAgent, setCniAgentNotReady, setCniAgentReady } from "../../harness/cni-agents.js";
import type { ControllerProcess } from "../../harness/controller-process.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "../controller/start.js";

const ISTIO = "cni.istio.io/not-ready";
/**
 * Long enough that the leader is frozen well before the taint is due, even on a loaded machine; shorter than the
 * renew deadline (10 s, the default), so on resume the taint's timer is overdue before the step-down timer is: the
 * write comes before the timer that would stop it, as in the operator's reproduction.
 */
const NOT_READY_AFTER_MS = 6_000;
/** How long the resumed process is watched for a write that must not come (it would act within milliseconds). */
const QUIET_MS = 5_000;

describe("startup taints: a leader frozen with a taint due and resumed later", function () {
  this.timeout(180_000);
  let node = "";
  let frozen: ControllerProcess | undefined;

  // Before the fixture's own (hooks run in order): resumed whatever happened, so its SIGTERM can stop the process.
  afterEach(async () => {
    frozen?.signal("SIGCONT");
    frozen = undefined;
    await t.api.deleteNode({ name: node }).catch(() => {});
  });
  const t = controllerTest();

  it("writes no Node after the replica that led meanwhile tainted and untainted it", async () => {
    node = `frozen-${randomBytes(3).toString("hex")}`;
    await t.api.createNode({ body: { metadata: { name: node } } });
    const agent = { namespace: t.namespace, name: agentName("istio", node) };
    await createCniAgent(t.api, {
      namespace: t.namespace,
      mesh: "istio",
      nodeName: node,
      readySince: new Date(Date.now() - 60_000),
    });
    const args = [
      "--cni-agent-gate=on",
      `--cni-agent-namespace=${t.namespace}`,
      "--cni-agent-min-ready=0s",
      "--startup-taint=continuous",
      `--startup-taint-not-ready-after=${NOT_READY_AFTER_MS / 1000}s`,
      "--startup-taint-max-share=1",
      "--leader-elect=true",
      `--leader-election-namespace=${t.namespace}`,
    ];
    const replicas = [await t.start(args), await t.start(args)];
    const { leader, follower } = await waitFor(
      "one leader",
      async () => {
        const flags = await Promise.all(replicas.map((replica) => replica.metric("cni_repair_leader")));
        if (flags.filter((flag) => flag === 1).length !== 1) return undefined;
        const [first, second] = flags[0] === 1 ? replicas : [...replicas].reverse();
        return first && second && { leader: first, follower: second };
      },
      { timeoutMs: 20_000 },
    );
    if (!leader || !follower) throw new Error("expected a leader and a follower");
    const ours = () =>
      nodeWrites(controlPlane().auditLogPath, node).filter((e) => e.userAgent?.startsWith("cni-repair/"));
    // The look at a NotReady agent asks to look again when the taint is due (requeue_after).
    const reconciles = () =>
      leader.metric("controller_runtime_reconcile_total", { controller: "startup-taints", result: "requeue_after" });

    // The agent goes NotReady; the leader looks at the node (the taint is due in NOT_READY_AFTER_MS) and freezes.
    const before = await reconciles();
    await setCniAgentNotReady(t.api, agent);
    await waitFor("the leader to look at the node", async () => (await reconciles()) > before, { timeoutMs: 10_000 });
    leader.signal("SIGSTOP");
    frozen = leader;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(ours(), "Node writes before the freeze").to.deep.equal([]);

    // The follower leads, taints the node once the agent has stayed NotReady long enough, and untaints it when the
    // agent is back: the node's taints are as they were when the leader froze.
    await waitFor("the follower to lead", async () => (await follower.metric("cni_repair_leader")) === 1, {
      timeoutMs: 40_000,
    });
    await waitFor("the follower's taint", () => ours().some((e) => e.responseStatus?.code === 200), {
      timeoutMs: 20_000,
    });
    await setCniAgentReady(t.api, agent, new Date());
    await waitFor("the follower's removal", () => ours().filter((e) => e.responseStatus?.code === 200).length === 2, {
      timeoutMs: 20_000,
    });
    const settled = ours().length;

    // Resumed, with the taint long overdue by its own clocks: it must write nothing that succeeds.
    leader.signal("SIGCONT");
    frozen = undefined;
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    const succeeded = ours()
      .slice(settled)
      .filter((e) => (e.responseStatus?.code ?? 0) < 300)
      .map((e) => `${e.verb} ${e.responseStatus?.code} ${JSON.stringify(e.requestObject)}`);
    expect(succeeded, "successful Node writes after the resume").to.deep.equal([]);
    expect(leader.logsWith("startup taint: added"), "the resumed leader's log").to.deep.equal([]);
    const taints = (await t.api.readNode({ name: node })).spec?.taints ?? [];
    expect(taints.map((taint) => taint.key)).to.not.include(ISTIO);
  });
});
