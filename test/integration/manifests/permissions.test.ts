// Least privilege per mode for the kustomize overlays: exactly the permissions of its mode, and refusals for what
// it must never do (test/harness/mode-permissions.ts; the Helm chart's upgrade test asks the same questions).
import { expectExactGrants, expectModeVerdicts } from "../../harness/mode-permissions.js";
import { installOverlay, OVERLAYS, uninstall } from "../../harness/overlays.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

describe("manifests: least privilege per mode", () => {
  after(async () => {
    await uninstall(controlPlane());
  });

  for (const overlay of OVERLAYS) {
    it(`${overlay}: exactly the permissions of its mode, cluster-wide and in its own namespace`, async () => {
      const plane = controlPlane();
      const { token } = await installOverlay(plane, overlay);
      await expectExactGrants(plane, token, overlay);
    });

    it(`${overlay}: allowed what its mode needs, refused everything it must not do`, async () => {
      const plane = controlPlane();
      await installOverlay(plane, overlay);
      await expectModeVerdicts(plane, overlay);
    });
  }
});
