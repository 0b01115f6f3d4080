// The repair writes against the real API server ask for only the pod's metadata back, as protobuf (its answer is
// not read): the server then encodes a small PartialObjectMetadata instead of the whole pod, the controller leaves
// it unparsed, and a refused write still answers a Status naming its cause.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import { decodePod, wantedStrings } from "../../../src/kube/pod-protobuf.js";
import { deletePod, labelPodViaStatus } from "../../../src/kube/pods-api.js";
import { isProtobuf, openEnvelope } from "../../../src/kube/protobuf-envelope.js";
import { ProtobufReader } from "../../../src/kube/protobuf-reader.js";
import { type BytesResponse, KubeTransport, type RequestOptions, type Verb } from "../../../src/kube/transport.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

/** The transport as the controller has it, keeping each answer for the test to look at. */
class RecordingTransport extends KubeTransport {
  readonly answers: BytesResponse[] = [];

  override async requestBytes(
    verb: Verb,
    method: string,
    path: string,
    options?: RequestOptions,
  ): Promise<BytesResponse> {
    const answer = await super.requestBytes(verb, method, path, options);
    this.answers.push(answer);
    return answer;
  }
}

/** The answer's kind, the field numbers at its top level, and its metadata (ObjectMeta is field 1 of both). */
function metadataAnswer(answer: BytesResponse | undefined) {
  expect(isProtobuf(answer?.contentType), `protobuf, not ${answer?.contentType}`).to.equal(true);
  const { kind, raw } = openEnvelope(answer?.bytes ?? Buffer.alloc(0));
  const reader = new ProtobufReader(raw);
  const fields = new Set<number>();
  for (let tag = reader.tag(raw.length); tag !== 0; tag = reader.tag(raw.length)) {
    fields.add(tag >>> 3);
    reader.skip(tag & 7, raw.length);
  }
  const none = wantedStrings([]);
  const projection = {
    labelKeys: wantedStrings(["cni-repair/broken"]),
    annotationKeys: none,
    conditionTypes: none,
    initContainers: new Set<string>(),
    containerStarts: false,
    messages: false,
  };
  return { kind, fields: [...fields], metadata: decodePod(raw, projection).metadata };
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
    const answer = metadataAnswer(transport.answers[0]);
    expect(answer.kind).to.equal("PartialObjectMetadata");
    expect(answer.fields, "metadata only: no spec (2), no status (3)").to.deep.equal([1]);
    expect(answer.metadata.uid).to.equal(uid);
    const gone = await api.readNamespacedPod({ namespace, name: "broken" });
    expect(gone.metadata?.deletionTimestamp, "the pod is being deleted").to.not.equal(undefined);
  });

  it("a label through pods/status gets the pod's metadata back, with the label", async () => {
    const pod = await createPodInState(api, { namespace, name: "labelled" });

    await labelPodViaStatus(transport, { namespace, name: "labelled" }, pod.metadata?.resourceVersion ?? "", {
      "cni-repair/broken": "true",
    });

    const answer = metadataAnswer(transport.answers[0]);
    expect(answer.kind).to.equal("PartialObjectMetadata");
    expect(answer.fields, "metadata only: no spec (2), no status (3)").to.deep.equal([1]);
    expect(answer.metadata.labels).to.include({ "cni-repair/broken": "true" });
  });
});
