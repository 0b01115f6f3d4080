// The repair writes against the real API server ask for only the pod's metadata back (its answer is not read):
// the server then encodes, and the controller parses, a small PartialObjectMetadata instead of the whole pod, and a
// refused write still answers a Status naming its cause.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import { deletePod, labelPodViaStatus } from "../../../src/kube/pods-api.js";
import { type ApiResponse, KubeTransport, type RequestOptions, type Verb } from "../../../src/kube/transport.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

/** The transport as the controller has it, keeping each answer's body for the test to look at. */
class RecordingTransport extends KubeTransport {
  readonly answers: unknown[] = [];

  override async request(verb: Verb, method: string, path: string, options?: RequestOptions): Promise<ApiResponse> {
    const answer = await super.request(verb, method, path, options);
    this.answers.push(answer.body);
    return answer;
  }
}

describe("act: pod writes answer metadata only", () => {
  let api: CoreV1Api;
  let namespace: string;
  let transport: RecordingTransport;

  beforeEach(async () => {
    const kubeConfig = controlPlane().kubeConfig();
    api = kubeConfig.makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api);
    transport = new RecordingTransport(new KubeConfigCredentials(kubeConfig), { userAgent: "cni-repair/test" });
  });

  afterEach(async () => {
    await transport.close();
  });

  it("a DELETE with preconditions gets the pod's metadata back, not the pod; a refused one still names its cause", async () => {
    const pod = await createPodInState(api, { namespace, name: "broken" });
    const uid = pod.metadata?.uid ?? "";
    const resourceVersion = pod.metadata?.resourceVersion ?? "";

    const refused = await deletePod(
      transport,
      { namespace, name: "broken" },
      { uid: "not-its-uid", resourceVersion },
      { dryRun: false },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String(refused)).to.match(/the UID in the precondition \(not-its-uid\) does not match/);

    await deletePod(transport, { namespace, name: "broken" }, { uid, resourceVersion }, { dryRun: false });
    const [answer] = transport.answers as { kind?: string; metadata?: { uid?: string }; spec?: unknown }[];
    expect(answer?.kind).to.equal("PartialObjectMetadata");
    expect(answer?.metadata?.uid).to.equal(uid);
    expect(answer).to.not.have.property("spec");
    const gone = await api.readNamespacedPod({ namespace, name: "broken" });
    expect(gone.metadata?.deletionTimestamp, "the pod is being deleted").to.not.equal(undefined);
  });

  it("a label through pods/status gets the pod's metadata back, with the label", async () => {
    const pod = await createPodInState(api, { namespace, name: "labelled" });

    await labelPodViaStatus(transport, { namespace, name: "labelled" }, pod.metadata?.resourceVersion ?? "", {
      "cni-repair/broken": "true",
    });

    const [answer] = transport.answers as { kind?: string; metadata?: { labels?: Record<string, string> } }[];
    expect(answer?.kind).to.equal("PartialObjectMetadata");
    expect(answer?.metadata?.labels).to.include({ "cni-repair/broken": "true" });
    expect(answer).to.not.have.property("status");
  });
});
