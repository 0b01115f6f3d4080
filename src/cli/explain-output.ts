// explain's output: the Explanation as JSON or YAML, or as a few labelled lines for a terminal.
import type { OutputFormat } from "../config/config.js";
import type { Explanation } from "./explain.js";
import { renderStructured } from "./structured-output.js";

export function renderExplanation(explanation: Explanation, output: OutputFormat): string {
  if (output !== "table") return renderStructured(explanation, output);
  const { pod, scope, rule, validator, verdict, agents, storm, guards, decision, modes } = explanation;
  const owner = pod.owner ? `${pod.owner.kind}/${pod.owner.name}` : "none (bare pod)";
  const lines = [
    `Pod:        ${pod.namespace}/${pod.name} (uid ${pod.uid})`,
    `Node:       ${pod.node ?? "(not scheduled)"}   Phase: ${pod.phase ?? "?"}   Owner: ${owner}${pod.staticPod ? "   static pod mirror" : ""}`,
    `Scope:      ${scope.detail}`,
    `Rule:       ${rule.name === null ? `none (${rule.detail})` : `${rule.name}: ${rule.detail}`}`,
  ];
  if (validator !== null) {
    const state = typeof validator.state === "string" ? validator.state : exitText(validator.state);
    const last = validator.lastState === null ? "none" : exitText(validator.lastState);
    lines.push(
      `Validator:  ${validator.container}: state ${state}; last state ${last}; restarts ${validator.restartCount}`,
    );
  }
  if (explanation.istioRepair !== null) lines.push(`Istio:      repair ${explanation.istioRepair}`);
  lines.push(
    `Verdict:    ${verdict.broken ? `broken: ${verdict.reason}${verdict.terminal ? " (finished pod)" : ""}` : `not broken: ${verdict.reason}`}`,
  );
  for (const agent of agents) {
    const since = agent.ready
      ? `Ready since ${agent.readySince ?? "?"} (seen Ready since ${agent.seenReadySince})`
      : "not Ready";
    lines.push(`Agent:      ${agent.what} ${agent.pod}: ${since}; ${agent.minReadySeconds} s required`);
  }
  lines.push(`Storm:      ${storm.node}; ${storm.cluster}`);
  const taint = explanation.startupTaint;
  if (taint) {
    const what = taint.reason ? `${taint.action}: ${taint.reason}` : taint.action;
    lines.push(
      `Taint:      node ${taint.node} ${taint.taints.length > 0 ? `carries ${taint.taints.join(", ")}` : "carries no startup taint"}; ${what}${taint.detail ? ` (${taint.detail})` : ""}`,
    );
  }
  for (const [guard, said] of Object.entries(guards)) lines.push(`Guard:      ${guard}: ${said.detail}`);
  lines.push(`Now (${explanation.mode}): ${decisionText(decision)}`);
  for (const [mode, view] of Object.entries(modes)) lines.push(`  in ${mode} mode: ${decisionText(view)}`);
  return `${lines.join("\n")}\n`;
}

const exitText = (t: { exitCode: number; reason: string | null; finishedAt: string | null }): string =>
  `terminated, exit ${t.exitCode}${t.reason ? ` (${t.reason})` : ""}${t.finishedAt ? ` at ${t.finishedAt}` : ""}`;

function decisionText(view: Explanation["decision"]): string {
  if (view.hold !== null) {
    const until = view.hold.until === null ? "" : ` until ${view.hold.until}`;
    const verb = view.action === "label" ? "label, held from delete" : "hold";
    return `${verb}: ${view.hold.reason}${until} (${view.hold.detail})`;
  }
  if (view.skip !== null) return `skip (${view.skip})`;
  return view.action === "none" ? "nothing to do" : view.action;
}
