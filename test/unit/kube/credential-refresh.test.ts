import { expect } from "chai";
import type { Authentication, ClusterCredentials } from "../../../src/kube/cluster-credentials.js";
import { CredentialRefresh, CredentialsError } from "../../../src/kube/credential-refresh.js";

/** Credentials whose authenticate() calls are counted and answered (or not) by the test. */
class ScriptedCredentials implements ClusterCredentials {
  readonly server = "https://127.0.0.1:6443";
  readonly namespace = undefined;
  readonly calls: PromiseWithResolvers<Authentication>[] = [];

  authenticate(): Promise<Authentication> {
    const call = Promise.withResolvers<Authentication>();
    this.calls.push(call);
    return call.promise;
  }

  describe(): { user: string; ca: string } {
    return { user: 'user "eks" (exec plugin aws)', ca: "the system's trusted CAs" };
  }
}

const auth = (token: string): Authentication => ({ headers: { authorization: `Bearer ${token}` }, tls: {} });

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("CredentialRefresh", () => {
  it("runs one authenticate() for requests that need credentials at the same time", async () => {
    const credentials = new ScriptedCredentials();
    const refresh = new CredentialRefresh(5_000);
    const waiting = [1, 2, 3, 4].map(() => refresh.authenticate(credentials));
    expect(credentials.calls).to.have.length(1);
    credentials.calls[0]?.resolve(auth("a"));
    const answers = await Promise.all(waiting);
    expect(answers.every((answer) => answer === answers[0])).to.equal(true);
    expect(answers[0]?.headers.authorization).to.equal("Bearer a");
  });

  it("starts afresh once the call in flight has answered", async () => {
    const credentials = new ScriptedCredentials();
    const refresh = new CredentialRefresh(5_000);
    const first = refresh.authenticate(credentials);
    credentials.calls[0]?.resolve(auth("a"));
    await first;
    const second = refresh.authenticate(credentials);
    expect(credentials.calls).to.have.length(2);
    credentials.calls[1]?.resolve(auth("b"));
    expect((await second).headers.authorization).to.equal("Bearer b");
  });

  it("gives up on a call that never answers, naming the credentials, and joins it again rather than start another", async () => {
    const credentials = new ScriptedCredentials();
    const refresh = new CredentialRefresh(20);
    const error = await rejectionOf(refresh.authenticate(credentials));
    expect(error).to.be.instanceOf(CredentialsError);
    expect((error as Error).message).to.equal(
      'no credentials for user "eks" (exec plugin aws) within 0.02 s: still waiting on it',
    );
    // The stuck call (a plugin process) is still the one in flight: a retry waits on it, no second process.
    const retry = refresh.authenticate(credentials);
    expect(credentials.calls).to.have.length(1);
    credentials.calls[0]?.resolve(auth("late"));
    expect((await retry).headers.authorization).to.equal("Bearer late");
  });

  it("words a failed call with the credentials and its message, and keeps the cause", async () => {
    const credentials = new ScriptedCredentials();
    const refresh = new CredentialRefresh(5_000);
    const waiting = refresh.authenticate(credentials);
    const failure = new Error("error: token expired; run aws sso login\n");
    credentials.calls[0]?.reject(failure);
    const error = await rejectionOf(waiting);
    expect(error).to.be.instanceOf(CredentialsError);
    expect((error as Error).message).to.equal(
      'cannot get credentials for user "eks" (exec plugin aws): error: token expired; run aws sso login',
    );
    expect((error as Error).cause).to.equal(failure);
  });

  it("says so when a failed plugin said nothing (client-node's message is its empty stderr)", async () => {
    const credentials = new ScriptedCredentials();
    const refresh = new CredentialRefresh(5_000);
    const waiting = refresh.authenticate(credentials);
    credentials.calls[0]?.reject(new Error(""));
    expect(((await rejectionOf(waiting)) as Error).message).to.equal(
      'cannot get credentials for user "eks" (exec plugin aws): it failed and said nothing on stderr',
    );
  });

  it("stops waiting when the request is aborted, with the abort's reason", async () => {
    const credentials = new ScriptedCredentials();
    const refresh = new CredentialRefresh(5_000);
    const controller = new AbortController();
    const waiting = refresh.authenticate(credentials, controller.signal);
    const reason = new Error("shutting down");
    controller.abort(reason);
    expect(await rejectionOf(waiting)).to.equal(reason);
    expect(await rejectionOf(refresh.authenticate(credentials, controller.signal))).to.equal(reason);
  });

  it("leaves no unhandled rejection when a call fails after every waiter gave up", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const credentials = new ScriptedCredentials();
      const refresh = new CredentialRefresh(10);
      await rejectionOf(refresh.authenticate(credentials));
      credentials.calls[0]?.reject(new Error("late failure"));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).to.deep.equal([]);
      // Settled, so the next caller starts a new call.
      void refresh.authenticate(credentials).catch(() => {});
      expect(credentials.calls).to.have.length(2);
      credentials.calls[1]?.resolve(auth("b"));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("does not join a call made for the credentials that others replaced (reloaded after a 401)", async () => {
    const old = new ScriptedCredentials();
    const reloaded = new ScriptedCredentials();
    const refresh = new CredentialRefresh(5_000);
    const first = refresh.authenticate(old);
    const second = refresh.authenticate(reloaded);
    expect([old.calls.length, reloaded.calls.length]).to.deep.equal([1, 1]);
    old.calls[0]?.resolve(auth("old"));
    reloaded.calls[0]?.resolve(auth("new"));
    expect((await first).headers.authorization).to.equal("Bearer old");
    expect((await second).headers.authorization).to.equal("Bearer new");
  });
});
