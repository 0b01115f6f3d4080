// The pod each overlay's workload would create is admitted by the API server's Pod Security Admission under the
// "restricted" standard its namespace enforces (server-side dry-run; there is no workload controller here).
import type { V1Pod } from "@kubernetes/client-node";
import { expect } from "chai";
import { kubectl } from "../../harness/kubectl.js";
import { INSTALL, installOverlay, OVERLAYS, uninstall, workloadOf } from "../../harness/overlays.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

describe("manifests: the controller pod under the restricted Pod Security Standard", () => {
  after(async () => {
    await uninstall(controlPlane());
  });

  const dryRunCreate = async (pod: V1Pod) =>
    await kubectl(["create", "--dry-run=server", "-o", "name", "-f", "-"], {
      plane: controlPlane(),
      input: JSON.stringify(pod),
    });

  for (const overlay of OVERLAYS) {
    it(`${overlay}: the workload's pod is admitted in the cni-repair namespace`, async () => {
      const { rendered } = await installOverlay(controlPlane(), overlay);
      const template = workloadOf(rendered).spec?.template;
      const pod: V1Pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { ...template?.metadata, name: `cni-repair-${overlay}-0`, namespace: INSTALL.namespace },
        ...(template?.spec && { spec: { ...template.spec, nodeName: "node-a" } }),
      };
      expect(await dryRunCreate(pod)).to.equal(`pod/cni-repair-${overlay}-0\n`);

      // The namespace really enforces it: the same pod with privilege escalation allowed is refused.
      const [container] = pod.spec?.containers ?? [];
      const escalating: V1Pod = {
        ...pod,
        ...(pod.spec && {
          spec: {
            ...pod.spec,
            containers: [{ ...container, name: "cni-repair", securityContext: { allowPrivilegeEscalation: true } }],
          },
        }),
      };
      const refused = await dryRunCreate(escalating).then(
        () => "admitted",
        (error: Error) => error.message,
      );
      expect(refused).to.match(/violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);
    });
  }
});
