// The initial pod list as a stream (WatchList): one watch with sendInitialEvents=true carries every pod, then the
// same changes as ever; a server that refuses it (422, as with the WatchList feature off) gets paginated LISTs
// instead, from then on. Either way every pod is cached and a broken one repaired.
import { expect } from "chai";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { kubeconfigVia } from "../../harness/e2e-controller.js";
import { HttpFaultProxy } from "../../harness/http-fault-proxy.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

const PODS = 12;
const PAGE = 5;

describe("streamed initial list (WatchList)", () => {
  const t = controllerTest();
  let proxy: HttpFaultProxy | undefined;

  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  /** PODS pods in the test namespace, the last broken; a controller behind the proxy (rule set before it starts). */
  const start = async (refuseWatchList: boolean) => {
    const { api, namespace } = t;
    for (let i = 0; i < PODS - 1; i++) {
      await createPodInState(
        api,
        { namespace, name: `ok-${i}` },
        { phase: "Running", validator: { kind: "succeeded" } },
      );
    }
    await createPodInState(api, { namespace, name: "broken" });
    const plane = controlPlane();
    proxy = await HttpFaultProxy.start(plane.apiServerAddress, plane.servingCertFiles);
    if (refuseWatchList) {
      proxy.setRule((request) =>
        request.url.includes("sendInitialEvents=true") ? { kind: "fail", code: 422 } : { kind: "pass" },
      );
    }
    const controller = t.adopt(
      await ControllerProcess.start({
        args: [
          `--kubeconfig=${kubeconfigVia(plane, proxy.port, "streamed")}`,
          `--field-selector=metadata.namespace=${namespace}`,
          `--list-page-size=${PAGE}`,
          ...PLAIN,
        ],
      }),
    );
    await waitFor("the broken pod to be deleted", async () => {
      const pod = await api.readNamespacedPod({ namespace, name: "broken" });
      return pod.metadata?.deletionTimestamp !== undefined;
    });
    expect(await controller.metric("cni_repair_cache_pods")).to.equal(PODS);
    const podRequests = (proxy?.log ?? []).filter((entry) =>
      entry.url.startsWith(`/api/v1/namespaces/${namespace}/pods?`),
    );
    return {
      streamed: podRequests.filter((entry) => entry.url.includes("sendInitialEvents=true")),
      pages: podRequests.filter((entry) => entry.url.includes("limit=")),
    };
  };
  /** Watches of the namespace's pods other than the stream, as the proxy saw them so far. */
  const laterWatches = () =>
    (proxy?.log ?? []).filter(
      (entry) =>
        entry.url.startsWith(`/api/v1/namespaces/${t.namespace}/pods?`) &&
        entry.url.includes("watch=true") &&
        !entry.url.includes("sendInitialEvents=true"),
    );

  it("lists with one streaming watch where the server offers it, and no LIST", async () => {
    const { streamed, pages } = await start(false);
    expect(streamed, "watches with sendInitialEvents").to.have.length(1);
    expect(streamed[0]?.status).to.equal(200);
    expect(streamed[0]?.url).to.include("resourceVersionMatch=NotOlderThan").and.not.include("resourceVersion=");
    expect(pages, "paginated LISTs").to.have.length(0);
    // The stream goes on as the watch: a pod broken after the list is seen on it, with no other watch dialled.
    // Another owner's pod: the same owner broken again on the node would be held by the loop backoff.
    await createPodInState(t.api, {
      namespace: t.namespace,
      name: "broken-later",
      owner: { kind: "ReplicaSet", name: "later-5c4b" },
    });
    await waitFor("the pod broken later to be deleted", async () => {
      const pod = await t.api.readNamespacedPod({ namespace: t.namespace, name: "broken-later" });
      return pod.metadata?.deletionTimestamp !== undefined;
    });
    expect(laterWatches(), "watches dialled beside the stream").to.deep.equal([]);
  });

  it("falls back to paginated LISTs when the server refuses the stream (422), and does not ask again", async () => {
    const { streamed, pages } = await start(true);
    expect(streamed.map((entry) => entry.status)).to.deep.equal([422]);
    expect(pages).to.have.length(Math.ceil(PODS / PAGE));
  });
});
