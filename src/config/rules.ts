// The detection rules a config asks for: presets in the order given, then the optional custom rule.

import { presetNames } from "../detect/presets.js";
import { type AmbientRule, isAmbient, type Rule } from "../detect/rule.js";
import { invalidValue } from "./config-error.js";
import type { FlagName, FlagValues } from "./flags.js";
import type { Setting } from "./read-args.js";

const customFlags = [
  "custom-exit-codes",
  "custom-termination-message",
  "custom-require-annotation",
  "custom-require-label",
  "custom-rule-name",
] as const satisfies readonly FlagName[];

/**
 * Builds the rule list; throws ConfigError for custom flags without --custom-init-container,
 * a custom rule without exit codes, no rule at all, and duplicate rule names.
 * `given` holds only what the user set (argv or env), so defaults never count as "set".
 */
export function buildRules(values: FlagValues, given: ReadonlyMap<FlagName, Setting>): readonly Rule[] {
  const at = (name: FlagName): Setting => given.get(name) ?? { text: "", source: `--${name}` };
  const custom = values["custom-init-container"] === "" ? undefined : customRule(values, at);
  if (custom === undefined) {
    const stray = customFlags.find((name) => given.has(name));
    if (stray !== undefined) throw invalidValue(at(stray).source, at(stray).text, "requires --custom-init-container");
  }

  const preset = given.get("preset") ?? { text: values.preset.map((rule) => rule.name).join(","), source: "--preset" };
  if (values.preset.length === 0 && custom === undefined) {
    throw invalidValue(
      preset.source,
      preset.text,
      `expected at least one of ${presetNames.join(", ")} (empty only with --custom-init-container)`,
    );
  }
  const rules: Rule[] = [];
  // The flag's parser turned each name into its preset's rule.
  for (const rule of values.preset) {
    if (rules.some((r) => r.name === rule.name)) {
      throw invalidValue(preset.source, preset.text, `lists ${rule.name} twice`);
    }
    rules.push(isAmbient(rule) ? ambientRule(rule, values) : rule);
  }
  if (custom !== undefined) {
    if (rules.some((r) => r.name === custom.name)) {
      const source = at("custom-rule-name");
      throw invalidValue(source.source, custom.name, `the preset ${custom.name} already uses that name`);
    }
    rules.push(custom);
  }
  return Object.freeze(rules);
}

/** The ambient preset with the --ambient-* and --ztunnel-* flags applied. */
function ambientRule(preset: AmbientRule, values: FlagValues): AmbientRule {
  return Object.freeze({
    ...preset,
    podSelector: values["ambient-pod-selector"],
    namespaceSelector: values["ambient-namespace-selector"],
    optOut: values["ambient-opt-out"],
    excludedNamespaces: values["ambient-excluded-namespaces"],
    enrollGraceMs: values["ambient-enroll-grace"],
    action: values["ambient-action"],
    ztunnelSelector: values["ztunnel-selector"],
    ztunnelNamespace: values["ztunnel-namespace"],
  });
}

function customRule(values: FlagValues, at: (name: FlagName) => Setting): Rule {
  if (values["custom-exit-codes"].length === 0) {
    const codes = at("custom-exit-codes");
    throw invalidValue(
      codes.source,
      codes.text,
      "expected at least one exit code 1-255 (required with --custom-init-container)",
    );
  }
  const message = values["custom-termination-message"];
  const annotation = values["custom-require-annotation"];
  const label = values["custom-require-label"];
  return Object.freeze({
    name: values["custom-rule-name"],
    initContainer: values["custom-init-container"],
    exitCodes: values["custom-exit-codes"],
    ...(message === "" ? {} : { messageContains: message }),
    ...(annotation === undefined ? {} : { requiredAnnotation: annotation }),
    ...(label === undefined ? {} : { requiredLabel: label }),
  });
}
