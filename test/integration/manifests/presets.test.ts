// The preset components (manifests/presets/<a+b>, generated from the chart): on any mode overlay, a component gives
// exactly what the chart renders with that `presets` value, so --preset and the meshed-pods admission policy always
// change together; two components on one overlay fail to build instead of one silently winning; and installed, each
// combination deletes a broken pod of every enabled mesh through the shipped policy and is refused one of the others.
import { expect } from "chai";
import { renderChart } from "../../harness/helm.js";
import { OVERLAYS, type Rendered, uninstall } from "../../harness/overlays.js";
import { expectInstallFollowsPresets } from "../../harness/preset-admission.js";
import { PRESET_COMBINATIONS, presetsValue, renderOverlayWithPresets } from "../../harness/presets.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

/** The rendered objects, comments and order aside: kind/name -> object. */
const objectsByName = (rendered: Rendered) =>
  Object.fromEntries(rendered.objects.map((object) => [`${object.kind}/${object.metadata?.name}`, object]));

describe("manifests: preset components", function () {
  this.timeout(10 * 60_000);

  after(async () => {
    await uninstall(controlPlane());
  });

  it("every combination on every mode overlay renders what the chart renders with that presets value", async () => {
    for (const presets of PRESET_COMBINATIONS) {
      for (const overlay of OVERLAYS) {
        const kustomized = await renderOverlayWithPresets(overlay, presets);
        const charted = await renderChart(overlay, { presets: presetsValue(presets) });
        expect(objectsByName(kustomized), `${overlay} + ${presets.join("+")}`).to.deep.equal(objectsByName(charted));
      }
    }
  });

  it("two preset components on one overlay fail to build, naming the --preset argument they both replace", async () => {
    const error = await renderOverlayWithPresets("cluster", ["istio", "linkerd"], ["linkerd"]).then(
      () => "built",
      (thrown: Error) => thrown.message,
    );
    expect(error).to.match(/testing value \/spec\/template\/spec\/containers\/0\/args\/1 failed/);
  });

  for (const presets of PRESET_COMBINATIONS) {
    it(`${presets.join("+")}: installed, deletes a broken pod of each enabled mesh, is refused the others`, async () => {
      await expectInstallFollowsPresets(controlPlane(), await renderOverlayWithPresets("cluster", presets), presets);
    });
  }
});
