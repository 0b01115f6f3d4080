// Preloaded (node --import) into a controller that runs in cluster: resolving a module its path must not load throws,
// so a static import of one anywhere in the in-cluster startup path makes the process fail to start (issue 14).
import { registerHooks } from "node:module";

/** The package, and why the in-cluster `run` must do without it. */
const FORBIDDEN: Record<string, string> = {
  "@kubernetes/client-node": "kubeconfigs only (~90 MB of RSS)",
  yaml: "scan and explain output only",
};
/** Only the package's index: the transport loads undici's Agent and request from their own modules. */
const FORBIDDEN_INDEX: Record<string, string> = { undici: "its index loads mocks, caches, WebSocket (~2 MB)" };

registerHooks({
  resolve(specifier, context, nextResolve) {
    const why =
      FORBIDDEN_INDEX[specifier] ??
      Object.entries(FORBIDDEN).find(([name]) => specifier === name || specifier.startsWith(`${name}/`))?.[1];
    if (why !== undefined) {
      throw new Error(`${specifier} imported by ${context.parentURL}: the in-cluster path must not load it (${why})`);
    }
    return nextResolve(specifier, context);
  },
});
