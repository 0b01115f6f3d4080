// The machine-readable outputs of scan and explain: one structure, as JSON or as YAML.
import { stringify } from "yaml";

/**
 * YAML is written with the 1.1 schema's quoting, so a string such as "on", "no" or a timestamp stays a string for
 * YAML 1.1 readers too (PyYAML, kubectl's decoder); every 1.2 reader reads the same values.
 */
export function renderStructured(value: unknown, format: "json" | "yaml"): string {
  if (format === "yaml") return stringify(value, { version: "1.1", lineWidth: 0 });
  return `${JSON.stringify(value, null, 2)}\n`;
}
