// The one control plane of a mocha run: started by the root hooks, read by every integration test.
import { ControlPlane } from "./control-plane.js";

let current: ControlPlane | undefined;

export async function startSharedControlPlane(): Promise<ControlPlane> {
  current ??= await ControlPlane.start();
  return current;
}

export async function stopSharedControlPlane(): Promise<void> {
  await current?.stop();
  current = undefined;
}

export function controlPlane(): ControlPlane {
  if (!current) throw new Error("no control plane: run integration tests with test/mocharc.integration.json");
  return current;
}
