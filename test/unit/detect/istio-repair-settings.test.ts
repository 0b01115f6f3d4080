// Istio's repair settings from its ConfigMap or env: Istio's defaults, its precedence, ParseBool's spellings, and a
// named warning for a value that is not a boolean.
import { expect } from "chai";
import {
  describeIstioRepair,
  type IstioRepairMode,
  type IstioRepairState,
  istioRepairMode,
  parseIstioRepair,
} from "../../../src/detect/istio-repair-settings.js";

const SOURCE = "ConfigMap istio-system/istio-cni-config";
const parse = (values: Record<string, string>, requireAKey = false) =>
  parseIstioRepair(values, SOURCE, { requireAKey });
const modeOf = (values: Record<string, string>): IstioRepairMode => {
  const parsed = parse(values);
  return parsed === undefined ? "off" : istioRepairMode({ kind: "detected", settings: parsed.settings });
};

describe("Istio's repair settings", () => {
  it("takes Istio's defaults for absent keys: enabled, repairing in place", () => {
    expect(parse({})).to.deep.equal({
      settings: { source: SOURCE, enabled: true, repairPods: true, deletePods: false, labelPods: false },
      warnings: [],
    });
    expect(modeOf({})).to.equal("in_place");
  });

  it("says nothing is set when a key is required and none is there (a DaemonSet without REPAIR_* env)", () => {
    expect(parse({ OTHER: "x" }, true)).to.equal(undefined);
    expect(parse({ REPAIR_ENABLED: "true" }, true)?.settings.enabled).to.equal(true);
  });

  const modes: [Record<string, string>, IstioRepairMode][] = [
    [{ REPAIR_REPAIR_PODS: "true", REPAIR_DELETE_PODS: "true", REPAIR_LABEL_PODS: "true" }, "in_place"],
    [{ REPAIR_REPAIR_PODS: "false", REPAIR_DELETE_PODS: "true", REPAIR_LABEL_PODS: "true" }, "delete"],
    [{ REPAIR_REPAIR_PODS: "false", REPAIR_LABEL_PODS: "true" }, "label"],
    [{ REPAIR_REPAIR_PODS: "false" }, "off"],
    [{ REPAIR_ENABLED: "false", REPAIR_REPAIR_PODS: "true" }, "off"],
  ];
  for (const [values, mode] of modes) {
    it(`follows Istio's precedence (repair, else delete, else label): ${JSON.stringify(values)} → ${mode}`, () => {
      expect(modeOf(values)).to.equal(mode);
    });
  }

  it("reads the booleans as Go's ParseBool does", () => {
    for (const text of ["1", "t", "T", "TRUE", "true", "True"]) {
      expect(parse({ REPAIR_DELETE_PODS: text })?.settings.deletePods, text).to.equal(true);
    }
    for (const text of ["0", "f", "F", "FALSE", "false", "False"]) {
      expect(parse({ REPAIR_REPAIR_PODS: text })?.settings.repairPods, text).to.equal(false);
    }
  });

  it("keeps Istio's default for a value that is not a boolean, with a warning naming key, value and source", () => {
    const parsed = parse({ REPAIR_REPAIR_PODS: "nope", REPAIR_DELETE_PODS: " true", REPAIR_LABEL_PODS: "yes" });
    expect(parsed?.settings).to.include({ repairPods: true, deletePods: false, labelPods: false });
    expect(parsed?.warnings).to.deep.equal([
      `${SOURCE}: REPAIR_REPAIR_PODS="nope" is not a boolean; Istio's default true applies`,
      `${SOURCE}: REPAIR_DELETE_PODS=" true" is not a boolean; Istio's default false applies`,
      `${SOURCE}: REPAIR_LABEL_PODS="yes" is not a boolean; Istio's default false applies`,
    ]);
  });

  it("describes each state in one line, unknown as held like in-place repair", () => {
    const detected: IstioRepairState = {
      kind: "detected",
      settings: { source: SOURCE, enabled: true, repairPods: false, deletePods: true, labelPods: false },
    };
    expect(describeIstioRepair(detected)).to.equal(
      `delete (${SOURCE}: REPAIR_ENABLED=true, REPAIR_REPAIR_PODS=false, REPAIR_DELETE_PODS=true, REPAIR_LABEL_PODS=false)`,
    );
    expect(istioRepairMode({ kind: "absent" })).to.equal("off");
    expect(describeIstioRepair({ kind: "absent" })).to.match(
      /^off \(no Istio CNI agent, no istio-cni-config ConfigMap/,
    );
    expect(istioRepairMode({ kind: "unknown", why: "forbidden" })).to.equal("unknown");
    expect(describeIstioRepair({ kind: "unknown", why: "forbidden" })).to.equal(
      "unknown (forbidden); held as if Istio repairs in place",
    );
  });
});
