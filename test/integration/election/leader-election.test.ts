// Leader election on the real API server: one leader, fast handover on release, safe failover when access breaks.
import { CoordinationV1Api, CoreV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import type { KubeTransport } from "../../../src/kube/transport.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { TcpProxy } from "../../harness/tcp-proxy.js";
import { waitFor } from "../../harness/wait.js";
import {
  LEASE,
  LeaderSampler,
  logLines,
  type RunningElector,
  SteppedClock,
  serviceAccountToken,
  startElector,
  TIMINGS,
  transportVia,
} from "./electors.js";

describe("leader election (real API server)", function () {
  this.timeout(60_000);
  let namespace: string;
  let electors: RunningElector[];
  let transports: KubeTransport[];
  let sampler: LeaderSampler | undefined;
  let proxy: TcpProxy | undefined;

  const transport = (server = controlPlane().server, token?: string, user?: string) => {
    const made = transportVia(controlPlane(), server, token, user);
    transports.push(made);
    return made;
  };
  const elector = (via: KubeTransport, identity: string, clock?: SteppedClock) => {
    const running = startElector(via, namespace, identity, clock);
    electors.push(running);
    return running;
  };
  const leaseSpec = async () =>
    (await controlPlane().kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace, name: LEASE }))
      .spec;
  const leads = (running: RunningElector) => () => running.elector.isLeader;

  beforeEach(async () => {
    namespace = await createTestNamespace(controlPlane().kubeConfig().makeApiClient(CoreV1Api));
    electors = [];
    transports = [];
    logLines.length = 0;
  });

  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.log(logLines.join("\n"));
    sampler?.stop();
    sampler = undefined;
    await Promise.all(electors.map((running) => running.stop()));
    await Promise.all(transports.map((made) => made.close()));
    await proxy?.close();
    proxy = undefined;
  });

  it("elects exactly one of two; the leader releases on abort and the other takes over within a retry period", async () => {
    const a = elector(transport(), "a");
    const b = elector(transport(), "b");
    sampler = new LeaderSampler([a, b]);
    const first = await waitFor("a leader", () => (a.elector.isLeader ? a : b.elector.isLeader ? b : undefined));
    const second = first === a ? b : a;
    // Several lease durations with both campaigning: still one leader, the same one.
    await new Promise((resolve) => setTimeout(resolve, 3 * TIMINGS.leaseDurationMs));
    expect(first.elector.isLeader).to.equal(true);
    expect(second.elector.isLeader).to.equal(false);
    expect(second.changes).to.deep.equal([]);

    const stoppedAt = performance.now();
    await first.stop();
    expect(first.elector.isLeader).to.equal(false);
    await waitFor("the other to take over", leads(second), { timeoutMs: TIMINGS.leaseDurationMs });
    // A released lease is free at once: the successor's next jittered retry (≤ 2.2 × 500 ms) takes it.
    expect(performance.now() - stoppedAt).to.be.below(TIMINGS.leaseDurationMs / 2);
    expect(await leaseSpec()).to.include({ holderIdentity: second.elector.identity, leaseTransitions: 1 });
    expect(sampler.overlaps).to.equal(0);
  });

  it("the machine's wall clock set forward (NTP step, VM resumed from a snapshot): the leader keeps the lease, every renewal answered", async () => {
    // Both replicas on one machine, as in the faults suite's failover test: one wall clock jumps for both.
    const clock = new SteppedClock();
    const a = elector(transport(), "a", clock);
    const b = elector(transport(), "b", clock);
    sampler = new LeaderSampler([a, b]);
    const first = await waitFor("a leader", () => (a.elector.isLeader ? a : b.elector.isLeader ? b : undefined));
    const second = first === a ? b : a;
    await new Promise((resolve) => setTimeout(resolve, 2 * TIMINGS.retryPeriodMs));

    clock.step(30_000);
    // Several lease durations after the jump: the same leader, never a second one, nothing failed.
    await new Promise((resolve) => setTimeout(resolve, 3 * TIMINGS.leaseDurationMs));
    expect(first.changes.map((change) => change.leading)).to.deep.equal([true]);
    expect(second.changes).to.deep.equal([]);
    expect(await leaseSpec()).to.include({ holderIdentity: first.elector.identity, leaseTransitions: 0 });
    // The Lease's renewTime is the wall clock as it now reads.
    const renewedAt = Date.parse((await leaseSpec())?.renewTime?.toString() ?? "");
    expect(clock.now() - renewedAt).to.be.within(-1_000, 2 * TIMINGS.retryPeriodMs);
    // No warning: neither "failed to renew the lease" nor "lost the lease".
    expect(logLines.filter((line) => / (warn|error) /.test(line))).to.deep.equal([]);
    expect(sampler.overlaps).to.equal(0);
  });

  it("a leader cut off from the API server steps down within the renew deadline; the other waits out the lease", async () => {
    proxy = await TcpProxy.start(controlPlane().apiServerAddress);
    const a = elector(transport(`https://127.0.0.1:${proxy.port}`), "a");
    await waitFor("a to lead", leads(a));
    const b = elector(transport(), "b");
    sampler = new LeaderSampler([a, b]);
    await new Promise((resolve) => setTimeout(resolve, 2 * TIMINGS.retryPeriodMs));

    const cutAt = performance.now();
    proxy.refuse();
    proxy.cutAll();
    await waitFor("a to step down", () => !a.elector.isLeader, { timeoutMs: 2 * TIMINGS.renewDeadlineMs });
    const steppedDownAt = a.changes.at(-1)?.at ?? Number.NaN;
    expect(steppedDownAt - cutAt).to.be.at.most(TIMINGS.renewDeadlineMs + 500);

    await waitFor("b to take over", leads(b), { timeoutMs: 3 * TIMINGS.leaseDurationMs });
    const tookOverAt = b.changes[0]?.at ?? Number.NaN;
    // b saw a's last renewal (at most a retry period before the cut) and waited a lease duration after it.
    expect(tookOverAt - cutAt).to.be.at.least(TIMINGS.leaseDurationMs - TIMINGS.retryPeriodMs - 100);
    expect(tookOverAt).to.be.above(steppedDownAt);

    await new Promise((resolve) => setTimeout(resolve, TIMINGS.leaseDurationMs));
    expect(a.changes.map((change) => change.leading)).to.deep.equal([true, false]);
    expect(sampler.overlaps).to.equal(0);
    expect(sampler.samples).to.be.above(100);
  });

  it("a leader whose RoleBinding is deleted steps down and never leads again; the other takes over", async () => {
    const rules = [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] }];
    const token = await serviceAccountToken(controlPlane(), namespace, "elector-a", rules);
    // The authorizer learns of new bindings from an informer: a's first attempts may be refused, then it leads.
    const a = elector(transport(controlPlane().server, token, "elector-a"), "a");
    await waitFor("a to lead", leads(a), { timeoutMs: 20_000 });
    const b = elector(transport(), "b");
    sampler = new LeaderSampler([a, b]);
    await new Promise((resolve) => setTimeout(resolve, 2 * TIMINGS.retryPeriodMs));

    const rbac = controlPlane().kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.deleteNamespacedRoleBinding({ namespace, name: "elector-a" });
    await waitFor("a to step down", () => !a.elector.isLeader, { timeoutMs: 20_000 });
    await waitFor("b to take over", leads(b), { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, TIMINGS.leaseDurationMs));
    expect(a.changes.map((change) => change.leading)).to.deep.equal([true, false]);
    expect(b.elector.isLeader).to.equal(true);
    expect(sampler.overlaps).to.equal(0);
    expect(logLines.some((line) => line.includes("Forbidden") || line.includes("403"))).to.equal(true);
  });
});
