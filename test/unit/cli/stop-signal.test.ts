// listenForStop: a SIGTERM or SIGINT that comes while a start-up step still waits makes the step STOPPED.
import { EventEmitter } from "node:events";
import { expect } from "chai";
import { listenForStop, STOPPED } from "../../../src/cli/stop-signal.js";

/** A process stand-in whose signals the test sends. */
const signals = () => new EventEmitter() as EventEmitter & Pick<NodeJS.Process, "once">;

describe("listenForStop", () => {
  it("a step that settles first gives its own outcome, value or error", async () => {
    const stop = listenForStop(signals());
    expect(await stop.unless(Promise.resolve(7))).to.equal(7);
    const failing = stop.unless(Promise.reject(new Error("403")));
    await failing.then(
      () => expect.fail("resolved"),
      (error: Error) => expect(error.message).to.equal("403"),
    );
    expect(stop.signal).to.equal(undefined);
  });

  it("a signal while the step waits: STOPPED, naming the signal, and the step's later failure is dropped", async () => {
    const target = signals();
    const stop = listenForStop(target);
    const { promise: step, reject } = Promise.withResolvers<string>();
    const outcome = stop.unless(step);
    target.emit("SIGTERM");
    expect(await outcome).to.equal(STOPPED);
    expect(stop.signal).to.equal("SIGTERM");
    expect(await stop.received).to.equal("SIGTERM");
    let unhandled = false;
    const onUnhandled = () => {
      unhandled = true;
    };
    process.once("unhandledRejection", onUnhandled);
    reject(new Error("transport closed"));
    await new Promise((resolve) => setImmediate(resolve));
    process.removeListener("unhandledRejection", onUnhandled);
    expect(unhandled).to.equal(false);
  });

  it("after a stop, a step is STOPPED even if it has its answer, and the first signal is the one named", async () => {
    const target = signals();
    const stop = listenForStop(target);
    target.emit("SIGINT");
    target.emit("SIGTERM");
    expect(await stop.unless(Promise.resolve("permissions checked"))).to.equal(STOPPED);
    expect(stop.signal).to.equal("SIGINT");
  });

  it("listens once per signal: a second SIGTERM is left to Node's default action", () => {
    const target = signals();
    listenForStop(target);
    expect(target.listenerCount("SIGTERM")).to.equal(1);
    target.emit("SIGTERM");
    expect(target.listenerCount("SIGTERM")).to.equal(0);
  });
});
