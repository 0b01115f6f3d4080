// createEvent's Event names: the subject's name and a suffix unique to each Event, even many in one millisecond.
import { expect } from "chai";
import { createEvent } from "../../../src/kube/events-api.js";
import { scriptedTransport } from "../../support/scripted-transport.js";

describe("kube/events-api", () => {
  it("names each Event after its subject with a suffix of its own, even in the same millisecond", async () => {
    const { transport, calls } = scriptedTransport({ request: () => ({ body: {} }) });
    const now = new Date("2026-12-05T22:00:00.000Z");
    const subject = { kind: "Pod", namespace: "shop", name: "cart-7d9f8-abcde", uid: "u-1" } as const;
    const event = { type: "Warning", reason: "BrokenPodHeld", action: "Hold", note: "held" } as const;
    for (let i = 0; i < 300; i++) await createEvent(transport, subject, event, now);
    const names = calls.map((call) => (call.body as { metadata: { name: string } }).metadata.name);
    expect(new Set(names).size, "all different").to.equal(300);
    for (const name of names) expect(name).to.match(/^cart-7d9f8-abcde\.[0-9a-f]{17,}$/);
    expect(calls[0]?.path).to.equal("/apis/events.k8s.io/v1/namespaces/shop/events");
  });
});
