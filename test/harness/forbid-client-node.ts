// Preloaded (node --import) into a controller that must run without @kubernetes/client-node: resolving it throws,
// so a static import anywhere in the in-cluster startup path makes the process fail to start.
import { registerHooks } from "node:module";

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === "@kubernetes/client-node" || specifier.startsWith("@kubernetes/client-node/")) {
      throw new Error(`${specifier} imported by ${context.parentURL}: the in-cluster path must not load it`);
    }
    return nextResolve(specifier, context);
  },
});
