// Mocha root hooks: one real control plane for the whole integration run, always torn down.
import { startSharedControlPlane, stopSharedControlPlane } from "../harness/shared-control-plane.js";

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    // The first run may build the binaries (cached afterwards); starting takes a few seconds.
    this.timeout(30 * 60_000);
    await startSharedControlPlane();
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    await stopSharedControlPlane();
  },
};
