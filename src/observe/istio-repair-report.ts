// What the controller says when Istio's repair settings are read or change: one log line per change (a warning
// when Istio deletes or labels broken pods itself, or its settings are unknown), and the mode gauge.
import {
  describeIstioRepair,
  ISTIO_REPAIR_MODES,
  type IstioRepairState,
  istioRepairMode,
} from "../detect/istio-repair-settings.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";

export function reportIstioRepair(
  metrics: Pick<Metrics, "istioRepairMode">,
  log: Logger,
): (state: IstioRepairState) => void {
  return (state) => {
    const mode = istioRepairMode(state);
    for (const each of ISTIO_REPAIR_MODES) metrics.istioRepairMode.set({ mode: each }, each === mode ? 1 : 0);
    const fields = { istioRepair: describeIstioRepair(state) };
    switch (mode) {
      case "in_place":
        log.info("Istio repairs broken pods in place: the istio rule deletes only as its fallback", fields);
        return;
      case "delete":
      case "label":
        log.warn(
          `Istio ${mode === "delete" ? "deletes" : "labels"} broken pods itself: the istio rule holds them (mesh_repair_active); --istio-repair=ignore to act on them too`,
          fields,
        );
        return;
      case "off":
        log.info(
          state.kind === "absent"
            ? "Istio repair not detected: the istio rule acts on its own"
            : "Istio's repair is off: the istio rule acts on its own",
          fields,
        );
        return;
      case "unknown":
        log.warn(
          "Istio's repair settings are unknown (missing beside its running agent, unreadable, or differing): istio pods are held as if Istio repairs in place; fix what the message names, or --istio-repair=ignore to act on them",
          fields,
        );
        return;
    }
  };
}
