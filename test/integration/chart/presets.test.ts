// The chart's `presets` value, the one edit for a Helm install: installed with each combination, the controller
// runs exactly those rules and the chart's meshed-pods policy lets its ServiceAccount delete a broken pod of each
// enabled mesh and refuses (403, naming the policy) one of the meshes left out.
import { renderChart } from "../../harness/helm.js";
import { uninstall } from "../../harness/overlays.js";
import { expectInstallFollowsPresets } from "../../harness/preset-admission.js";
import { PRESET_COMBINATIONS, presetsValue } from "../../harness/presets.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

describe("chart: presets set the controller's rules and the admission policy together", function () {
  this.timeout(5 * 60_000);

  after(async () => {
    await uninstall(controlPlane());
  });

  for (const presets of PRESET_COMBINATIONS) {
    it(`presets=${presetsValue(presets)}: deletes a broken pod of each enabled mesh, is refused the others`, async () => {
      const rendered = await renderChart("cluster", { presets: presetsValue(presets) });
      await expectInstallFollowsPresets(controlPlane(), rendered, presets);
    });
  }
});
