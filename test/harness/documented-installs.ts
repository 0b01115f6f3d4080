// The install commands and kustomizations the docs show (fenced ```sh and ```yaml blocks), found by reading the
// docs, and run as a user would type them: paths of this repository resolved, helm and kubectl pointed at a test
// control plane.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { repositoryFile } from "./binaries.js";
import type { ControlPlane } from "./control-plane.js";
import { runHelm } from "./helm.js";
import { kubectl } from "./kubectl.js";

/** The pages whose install instructions are tested. */
export const INSTALL_DOCS = [
  "README.md",
  "docs/operations.md",
  "docs/helm-values.md",
  "docs/startup-taints.md",
  "charts/cni-repair/README.md",
];

/** What changes an install: everything else in a shell block (scan, logs, port-forward, …) is not collected. */
const INSTALL_COMMAND = /^(helm (install|upgrade)|kubectl (apply|delete|create namespace|label namespace)) /;

export type DocumentedStep =
  | { readonly doc: string; readonly kind: "command"; readonly text: string }
  | { readonly doc: string; readonly kind: "kustomization"; readonly text: string };

function fencedBlocks(markdown: string, language: string): string[] {
  const pattern = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\``, "gm");
  return [...markdown.matchAll(pattern)].map((match) => match[1] ?? "");
}

/** The doc's install steps in order: shell commands (continuations joined, comments cut) and kustomizations. */
export function documentedSteps(doc: string): DocumentedStep[] {
  const markdown = readFileSync(repositoryFile(doc), "utf8");
  const steps: { at: number; step: DocumentedStep }[] = [];
  for (const block of fencedBlocks(markdown, "sh")) {
    const at = markdown.indexOf(block);
    const lines = block.replace(/\\\n\s*/g, " ").split("\n");
    for (const line of lines) {
      const text = line
        .replace(/(^|\s+)#.*$/, "")
        .replace(/\s+/g, " ")
        .trim();
      if (INSTALL_COMMAND.test(text)) steps.push({ at, step: { doc, kind: "command", text } });
    }
  }
  for (const block of fencedBlocks(markdown, "yaml")) {
    if (/^kind: Kustomization$/m.test(block)) {
      steps.push({ at: markdown.indexOf(block), step: { doc, kind: "kustomization", text: block } });
    }
  }
  return steps.sort((a, b) => a.at - b.at).map(({ step }) => step);
}

/** Shell words: spaces split, single quotes group (all the docs use). */
export function shellWords(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? "");
}

/** This repository's paths (charts/…, manifests/…) as absolute paths: the docs' commands run from a checkout. */
const inCheckout = (word: string) => (/^(charts|manifests)\//.test(word) ? repositoryFile(word) : word);

/** Runs one documented command line (`a && b` as two) against the control plane; rejects naming what failed. */
export async function runDocumentedCommand(plane: ControlPlane, command: string): Promise<void> {
  for (const part of command.split(" && ")) {
    const [tool, ...args] = shellWords(part).map(inCheckout);
    if (tool === "kubectl") await kubectl(args, { plane });
    else if (tool === "helm") {
      const result = await runHelm(args, { plane });
      if (result.code !== 0) throw new Error(`${part} exited ${result.code}:\n${result.stderr}`);
    } else throw new Error(`${part}: only kubectl and helm are run`);
  }
}

/**
 * A documented kustomization, written into a directory of this checkout with its remote bases
 * (https://github.com/<org>/cni-repair//<path>?ref=<tag>) pointed at the same paths here.
 */
export function localKustomization(text: string, dir: string): string {
  return text.replace(/https:\/\/github\.com\/[^/]+\/cni-repair\/\/([^?\s]+)\?ref=\S+/g, (_url, path: string) =>
    relative(dir, repositoryFile(path)),
  );
}
