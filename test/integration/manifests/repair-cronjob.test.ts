// The repair CronJob's kustomize components (manifests/repair-cronjob/<mode>, generated from the chart): on its mode's
// overlay, alone or before a preset component, the kustomization renders exactly what the chart renders with
// cronJob.enabled (and those presets): the preset component sets the pass's --preset as it sets the controller's.

import { join } from "node:path";
import { expect } from "chai";
import { renderChart } from "../../harness/helm.js";
import { manifestsDir, type Rendered } from "../../harness/overlays.js";
import { presetsComponent, presetsValue, renderOverlayWith } from "../../harness/presets.js";

const objectsByName = (rendered: Rendered) =>
  Object.fromEntries(rendered.objects.map((object) => [`${object.kind}/${object.metadata?.name}`, object]));

describe("manifests: the repair CronJob components", function () {
  this.timeout(10 * 60_000);

  for (const mode of ["cluster", "label-only", "dry-run"] as const) {
    it(`${mode}: the overlay with its repair-cronjob component, alone and before the linkerd+istio-ambient preset, is the chart's rendering`, async () => {
      const cron = join(manifestsDir(), "repair-cronjob", mode);
      const alone = await renderOverlayWith(mode, [cron]);
      expect(objectsByName(alone)).to.deep.equal(objectsByName(await renderChart(mode, { "cronJob.enabled": "true" })));
      const presets = ["linkerd", "istio-ambient"] as const;
      const withPresets = await renderOverlayWith(mode, [cron, presetsComponent(presets)]);
      const charted = await renderChart(mode, { "cronJob.enabled": "true", presets: presetsValue(presets) });
      expect(objectsByName(withPresets)).to.deep.equal(objectsByName(charted));
    });
  }
});
