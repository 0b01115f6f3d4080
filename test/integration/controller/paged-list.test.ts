// The initial list comes in pages (--list-page-size), the next one asked for while the last is turned into
// facts: every page is read, in order, and a broken pod on the last page is found and repaired. The scope is one
// namespace, and the pods' names sort after the namespace's: listed cluster-wide with a metadata.namespace field
// selector, kube-apiserver 1.34 ends such a list after its first page (its continue token leaves the namespace
// out), so the controller must list on the namespaced path.
import { expect } from "chai";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { kubeconfigVia } from "../../harness/e2e-controller.js";
import { HttpFaultProxy } from "../../harness/http-fault-proxy.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

const PODS = 23;
const PAGE = 5;

describe("paged initial list", () => {
  const t = controllerTest();
  let proxy: HttpFaultProxy | undefined;

  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it(`reads all ${Math.ceil(PODS / PAGE)} pages of ${PODS} pods in order and repairs a pod on the last`, async () => {
    const { api, namespace } = t;
    const names = Array.from({ length: PODS }, (_, i) => `zz-${String(i).padStart(2, "0")}`);
    for (const name of names.slice(0, -1)) {
      await createPodInState(api, { namespace, name }, { phase: "Running", validator: { kind: "succeeded" } });
    }
    // Pods are listed in name order: the broken one comes last.
    const last = names.at(-1) as string;
    await createPodInState(api, { namespace, name: last });

    const plane = controlPlane();
    proxy = await HttpFaultProxy.start(plane.apiServerAddress, plane.servingCertFiles);
    const controller = t.adopt(
      await ControllerProcess.start({
        args: [
          `--kubeconfig=${kubeconfigVia(plane, proxy.port, "paged")}`,
          `--field-selector=metadata.namespace=${namespace}`,
          `--list-page-size=${PAGE}`,
          "--watch-list=false",
          ...PLAIN,
        ],
      }),
    );

    expect(await controller.metric("cni_repair_cache_pods")).to.equal(PODS);
    const lists = proxy.log.filter((entry) => entry.method === "GET" && entry.url.includes("limit="));
    const pages = lists.filter((entry) => entry.url.startsWith(`/api/v1/namespaces/${namespace}/pods?`));
    expect(pages, "every list request on the namespaced path").to.have.length(lists.length);
    expect(pages).to.have.length(Math.ceil(PODS / PAGE));
    expect(pages.every((entry) => !entry.url.includes("metadata.namespace"))).to.equal(true);
    const tokens = pages.map((entry) => new URL(entry.url, "https://x").searchParams.get("continue"));
    expect(tokens[0]).to.equal(null);
    expect(tokens.slice(1).every((token) => token !== null && token !== "")).to.equal(true);
    expect(new Set(tokens).size).to.equal(tokens.length);
    for (const entry of pages) expect(entry.url).to.contain(`limit=${PAGE}`);

    await waitFor("the pod on the last page to be deleted", async () => {
      const pod = await api.readNamespacedPod({ namespace, name: last });
      return pod.metadata?.deletionTimestamp !== undefined;
    });
    expect(await controller.metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" })).to.equal(
      1,
    );
  });
});
