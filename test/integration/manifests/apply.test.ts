// `kubectl apply --server-side` of every overlay's rendering: the API server accepts every object as written
// (strict field validation) and a server-side diff afterwards finds nothing it changed or dropped.
import { expect } from "chai";
import { kubectl } from "../../harness/kubectl.js";
import { installOverlay, OVERLAYS, uninstall } from "../../harness/overlays.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

describe("manifests: server-side apply on a real API server", () => {
  after(async () => {
    await uninstall(controlPlane());
  });

  for (const overlay of OVERLAYS) {
    it(`${overlay}: every object is accepted and stored as rendered`, async () => {
      const plane = controlPlane();
      const { rendered, applied } = await installOverlay(plane, overlay);
      expect(applied).to.have.length(rendered.objects.length);
      for (const line of applied) expect(line).to.match(/^[a-z0-9.]+\/[a-z0-9-]+ serverside-applied$/);
      const names = applied.map((line) => line.split(" ")[0]?.split("/")[1]);
      expect(names.sort()).to.deep.equal(rendered.objects.map((object) => object.metadata?.name).sort());

      // Exit code 0: the live objects are what applying the rendering again would produce.
      const diff = await kubectl(["diff", "--server-side", "--field-manager=cni-repair-tests", "-f", "-"], {
        plane,
        input: rendered.yaml,
      });
      expect(diff).to.equal("");
      const live = JSON.parse(await kubectl(["get", "-f", "-", "-o", "json"], { plane, input: rendered.yaml })) as {
        items: unknown[];
      };
      expect(live.items).to.have.length(rendered.objects.length);
    });
  }
});
