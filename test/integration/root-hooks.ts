// Mocha root hooks: one real control plane for the whole integration run, always torn down; a failed test's
// controller logs kept for the CI summary; and a run that ends with something still open exits anyway.
import { ControllerProcess } from "../harness/controller-process.js";
import { recordFailure } from "../harness/failure-log.js";
import { startSharedControlPlane, stopSharedControlPlane } from "../harness/shared-control-plane.js";

/** How long the process may stay up after the last hook before what holds it is named and it exits. */
const LINGER_LIMIT_MS = 20_000;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    // The first run may build the binaries (cached afterwards); starting takes a few seconds.
    this.timeout(30 * 60_000);
    await startSharedControlPlane();
  },
  beforeEach(): void {
    ControllerProcess.forgetStarted();
  },
  // Root afterEach hooks run even when a suite's own afterEach failed.
  afterEach(this: Mocha.Context): void {
    const test = this.currentTest;
    if (test?.state === "failed") recordFailure(test.fullTitle(), ControllerProcess.started());
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    await stopSharedControlPlane();
    // A failed hook can skip a suite's later cleanup (a proxy left listening): mocha would then wait for ever after
    // its summary. Unref'd, so a clean run exits as before; mocha's own exit handler still sets the exit code.
    setTimeout(() => {
      console.error(
        `the run left these open after its end, exiting anyway: ${process.getActiveResourcesInfo().join(", ")}`,
      );
      process.exit();
    }, LINGER_LIMIT_MS).unref();
  },
};
