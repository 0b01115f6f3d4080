// `key` or `key=value` flag values: the label or annotation a custom rule requires.

import type { Marker } from "../detect/rule.js";
import { fail, ok, type Parsed } from "./flag-kinds.js";
import { isLabelValue, isQualifiedName, labelValueExpectation, qualifiedNameExpectation } from "./names.js";

/** "" means no requirement; the value after the first "=" is checked as a label value for labels only. */
export function parseMarker(text: string, kind: "label" | "annotation"): Parsed<Marker | undefined> {
  if (text === "") return ok(undefined);
  const eq = text.indexOf("=");
  const key = eq < 0 ? text : text.slice(0, eq);
  if (!isQualifiedName(key)) return fail(`${kind} key ${JSON.stringify(key)}: ${qualifiedNameExpectation}`);
  if (eq < 0) return ok(Object.freeze({ key }));
  const value = text.slice(eq + 1);
  if (kind === "label" && !isLabelValue(value))
    return fail(`label value ${JSON.stringify(value)}: ${labelValueExpectation}`);
  return ok(Object.freeze({ key, value }));
}
