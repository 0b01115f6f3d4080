// The chart's admission policies for every kind of marker, as the API server compiles and enforces them: rendered
// with Linkerd, Istio ambient and a custom rule enabled (Istio not), installed, and asked with the ServiceAccount's
// token which pods it may delete. Also the values that turn them off, and the custom rule that cannot have them.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { answersInForce, auditedActions, deniedBy, podActions, policyInForce } from "../../harness/admission.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { chartDir, IMAGE_VALUES, renderChart, runHelm, setValues } from "../../harness/helm.js";
import { kubectl } from "../../harness/kubectl.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controllerContainer, installRendered, renderedPermissions, uninstall } from "../../harness/overlays.js";
import { meshedPod } from "../../harness/pod-fixtures.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

const CUSTOM = {
  "customRule.initContainer": "acme-check",
  "customRule.exitCodes": "{42}",
  "customRule.requireAnnotation": "acme.io/mesh",
  "customRule.requireLabel": "acme.io/injected=true",
  "customRule.name": "acme",
};

describe("chart: admission policies", function () {
  this.timeout(120_000);

  it("admissionPolicies.*=false renders neither policy, nor the flag, nor the permission to read them", async () => {
    const off = await renderChart("per-node", {
      "admissionPolicies.meshedPods": "false",
      "admissionPolicies.ownNode": "false",
    });
    const kinds = off.objects.map((object) => object.kind);
    expect(kinds).to.not.include("ValidatingAdmissionPolicy");
    expect(kinds).to.not.include("ValidatingAdmissionPolicyBinding");
    expect(controllerContainer(off).args?.join(" ")).to.not.include("--admission-policies");
    expect(renderedPermissions(off).filter((permission) => permission.includes("admissionregistration"))).to.deep.equal(
      [],
    );
    const ownNodeOnly = await renderChart("per-node", { "admissionPolicies.meshedPods": "false" });
    expect(controllerContainer(ownNodeOnly).args).to.include("--admission-policies=cni-repair-own-node");
  });

  it("refuses a custom rule without a marker while the meshed-pods policy is on, naming both ways out", async () => {
    const result = await runHelm([
      "template",
      "cni-repair",
      chartDir(),
      ...setValues({ ...IMAGE_VALUES, "customRule.initContainer": "acme-check", "customRule.exitCodes": "{42}" }),
    ]);
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.include("customRule custom has no marker (requireAnnotation or requireLabel)");
    expect(result.stderr).to.include("admissionPolicies.meshedPods=false");
  });

  describe("linkerd, istio-ambient and a custom rule, installed", () => {
    let namespace: string;
    let ambientNamespace: string;
    let excludedNamespace: string;
    let token: string;

    before(async () => {
      const plane = controlPlane();
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      namespace = await createTestNamespace(api, "cp");
      ambientNamespace = await createTestNamespace(api, "cpa");
      excludedNamespace = await createTestNamespace(api, "cpx");
      for (const name of [ambientNamespace, excludedNamespace]) {
        await kubectl(["label", "namespace", name, "istio.io/dataplane-mode=ambient"], { plane });
      }
      const rendered = await renderChart("cluster", {
        presets: "{linkerd,istio-ambient}",
        "ambient.excludedNamespaces": `{${excludedNamespace}}`,
        ...CUSTOM,
      });
      ({ token } = await installRendered(plane, rendered));
      await api.createNamespacedPod({ namespace, body: meshedPod({ namespace, name: "probe", mesh: "none" }) });
      await policyInForce(() => podActions(plane, token, namespace).remove("probe", true));
    });

    after(async () => {
      await uninstall(controlPlane());
    });

    it("allows deleting pods with an enabled marker only; the message lists the markers", async () => {
      const plane = controlPlane();
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      const pod = async (
        ns: string,
        name: string,
        marks: { labels?: Record<string, string>; annotations?: Record<string, string> },
      ) =>
        await api.createNamespacedPod({
          namespace: ns,
          body: meshedPod({ namespace: ns, name, mesh: "none", ...marks }),
        });
      await createPodInState(api, { namespace, name: "linkerd", mesh: "linkerd" });
      await createPodInState(api, { namespace, name: "istio", mesh: "istio" });
      await pod(namespace, "ambient-label", { labels: { "istio.io/dataplane-mode": "ambient" } });
      await pod(namespace, "custom", { labels: { "acme.io/injected": "true" }, annotations: { "acme.io/mesh": "x" } });
      await pod(namespace, "custom-half", { annotations: { "acme.io/mesh": "x" } });
      await pod(namespace, "custom-wrong-value", {
        labels: { "acme.io/injected": "no" },
        annotations: { "acme.io/mesh": "x" },
      });
      await pod(ambientNamespace, "in-ambient-namespace", {});
      await pod(ambientNamespace, "opted-out", { labels: { "istio.io/dataplane-mode": "none" } });
      await pod(excludedNamespace, "excluded", { labels: { "istio.io/dataplane-mode": "ambient" } });

      const expected: Record<string, number> = {
        linkerd: 200,
        // The istio preset is not enabled in this install.
        istio: 403,
        "ambient-label": 200,
        custom: 200,
        "custom-half": 403,
        "custom-wrong-value": 403,
        "in-ambient-namespace": 200,
        "opted-out": 403,
        excluded: 403,
      };
      const namespaceOf = (name: string) =>
        ({ "in-ambient-namespace": ambientNamespace, "opted-out": ambientNamespace, excluded: excludedNamespace })[
          name
        ] ?? namespace;
      const remove = (name: string, dryRun = false) => podActions(plane, token, namespaceOf(name)).remove(name, dryRun);
      await answersInForce(expected, (name) => remove(name, true));

      const codes: Record<string, number> = {};
      const messages: string[] = [];
      for (const name of Object.keys(expected)) {
        const outcome = await remove(name);
        codes[name] = outcome.code;
        if (outcome.code === 403) messages.push(outcome.message);
      }
      expect(codes).to.deep.equal(expected);
      for (const message of messages) {
        expect(message).to.include(deniedBy("cni-repair-meshed-pods"));
        expect(message).to.include("label linkerd.io/control-plane-ns (linkerd)");
        expect(message).to.include("annotation acme.io/mesh and label acme.io/injected=true (acme)");
      }
      expect(auditedActions(plane, namespace).map(({ line }) => line)).to.deep.equal([
        "delete linkerd 200",
        "delete istio 403",
        "delete ambient-label 200",
        "delete custom 200",
        "delete custom-half 403",
        "delete custom-wrong-value 403",
      ]);
    });
  });
});
