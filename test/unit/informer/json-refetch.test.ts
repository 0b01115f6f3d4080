// JsonRefetch: an undecodable object read again as JSON is applied unless an event for it was applied meanwhile (a
// later event is newer than the one that failed) or a relist replaced the cache; a failed GET is retried, not dropped.
import { expect } from "chai";
import { JsonRefetch } from "../../../src/informer/json-refetch.js";

const key = { namespace: "shop", name: "a" };

/** A GET the test answers when it wants, counting calls. */
function pendingFetch() {
  const answers: ((value: unknown) => void)[] = [];
  let calls = 0;
  return {
    fetch: () => {
      calls++;
      return new Promise<unknown>((resolve) => answers.push(resolve));
    },
    answer: (value: unknown) => answers.shift()?.(value),
    get calls() {
      return calls;
    },
  };
}

describe("informer/JsonRefetch", () => {
  const signal = new AbortController().signal;

  it("applies the object the GET brings, or undefined when it is gone", async () => {
    for (const body of [{ kind: "Pod" }, undefined]) {
      const get = pendingFetch();
      const applied: unknown[] = [];
      const refetch = new JsonRefetch(get.fetch);
      const done = refetch.refetch(
        key,
        "shop/a",
        signal,
        (object) => applied.push(object),
        () => {},
      );
      get.answer(body);
      await done;
      expect(applied).to.deep.equal([body]);
    }
  });

  it("drops the answer when an event for the key, or a relist, was applied while the GET was out", async () => {
    for (const supersede of [(r: JsonRefetch) => r.applied("shop/a"), (r: JsonRefetch) => r.appliedAll()]) {
      const get = pendingFetch();
      const applied: unknown[] = [];
      const refetch = new JsonRefetch(get.fetch);
      const done = refetch.refetch(
        key,
        "shop/a",
        signal,
        (object) => applied.push(object),
        () => {},
      );
      refetch.applied("shop/other");
      supersede(refetch);
      get.answer({ kind: "Pod" });
      await done;
      expect(applied).to.deep.equal([]);
    }
  });

  it("retries a GET that failed, reporting each failure, until one answers", async () => {
    let calls = 0;
    const failures: unknown[] = [];
    const applied: unknown[] = [];
    const refetch = new JsonRefetch(async () => {
      if (++calls < 3) throw new Error(`down ${calls}`);
      return { kind: "Pod" };
    });
    await refetch.refetch(
      key,
      "shop/a",
      signal,
      (object) => applied.push(object),
      (error) => failures.push(error),
    );
    expect(calls).to.equal(3);
    expect(failures.map(String)).to.deep.equal(["Error: down 1", "Error: down 2"]);
    expect(applied).to.deep.equal([{ kind: "Pod" }]);
  });
});
