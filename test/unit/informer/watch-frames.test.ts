// readWatchFrames: a Kubernetes protobuf watch body (4-byte big-endian length + WatchEvent) to events, whatever the
// chunk boundaries; the object decoded from its "k8s\0" envelope; a Status for ERROR events; a frame cut off by the
// end of the body, or bytes that are not a WatchEvent, reject.
import { Readable } from "node:stream";
import { expect } from "chai";
import fc from "fast-check";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { podsAsProtobuf, projectionOf } from "../../../src/informer/pod-projection.js";
import { readWatchFrames } from "../../../src/informer/watch-frames.js";
import type { WatchEvent } from "../../../src/informer/watch-lines.js";
import { UndecodableObject } from "../../../src/kube/protobuf-objects.js";
import { encodePod, encodeStatus, envelope, watchFrame } from "../../support/pod-protobuf-encoder.js";
import { splitAt } from "../../support/split-bytes.js";
import { istioPodJson } from "../detect/raw-pod-fixture.js";

const schema = factsSchema([presetRule("istio") as Rule]);
const { objects } = podsAsProtobuf(projectionOf(schema));

async function read(chunks: readonly Uint8Array[], stopAfter = Number.POSITIVE_INFINITY): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  await readWatchFrames(
    Readable.from(chunks),
    objects,
    () => {},
    (event, stop) => {
      events.push(event);
      if (events.length >= stopAfter) stop();
    },
  );
  return events;
}

const first = istioPodJson();
const second = istioPodJson();
second.metadata.name = "second";
second.metadata.resourceVersion = "4711024";
const status = { status: "Failure", message: "too old resource version", reason: "Expired", code: 410 };
const stream = Buffer.concat([
  watchFrame("ADDED", envelope("Pod", encodePod(first))),
  watchFrame("MODIFIED", envelope("Pod", encodePod(second))),
  watchFrame("ERROR", envelope("Status", encodeStatus(status))),
]);

describe("informer/readWatchFrames", () => {
  it("gives each event with its object decoded, whatever the chunk boundaries", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(stream.length), { maxLength: 12 }), async (cuts) => {
        const events = await read(splitAt(stream, cuts));
        expect(events.map((e) => e.type)).to.deep.equal(["ADDED", "MODIFIED", "ERROR"]);
        expect(toPodFacts(events[0]?.object, schema)).to.deep.equal(toPodFacts(first, schema));
        expect(toPodFacts(events[1]?.object, schema)).to.deep.equal(toPodFacts(second, schema));
        expect(events[2]?.object).to.deep.equal({ kind: "Status", ...status });
      }),
      { numRuns: 300 },
    );
  });

  it("a frame cut off by the end of the body rejects", async () => {
    const cut = stream.subarray(0, stream.length - 3);
    let error: unknown;
    await read([cut]).catch((e: unknown) => {
      error = e;
    });
    expect(String(error)).to.match(/ended inside a frame/);
  });

  it("a length no object has rejects before a buffer of that length is made", async () => {
    const huge = Buffer.from([0xff, 0xff, 0xff, 0xf0, 1, 2, 3]);
    let error: unknown;
    await read([huge]).catch((e: unknown) => {
      error = e;
    });
    expect(String(error)).to.match(/watch frame of 4294967280 bytes/);
  });

  it("stops at stop(): the rest of the body is not read", async () => {
    expect((await read([stream], 1)).map((e) => e.type)).to.deep.equal(["ADDED"]);
  });

  it("an object that does not decode comes as an UndecodableObject with its key", async () => {
    const broken = Buffer.concat([encodePod(first), Buffer.from([(3 << 3) | 2, 2, (1 << 3) | 0, 1])]);
    const [event] = await read([watchFrame("MODIFIED", envelope("Pod", broken))]);
    expect(event?.object).to.be.instanceOf(UndecodableObject);
    expect((event as { object: UndecodableObject }).object.key).to.deep.equal({
      namespace: "bookinfo",
      name: first.metadata.name,
    });
  });

  it("an object of another kind, or not in an envelope, comes as an UndecodableObject without a key", async () => {
    const events = await read([
      watchFrame("ADDED", envelope("ConfigMap", encodePod(first))),
      watchFrame("ADDED", encodePod(first)),
    ]);
    for (const event of events) {
      expect(event.object).to.be.instanceOf(UndecodableObject);
      expect((event.object as UndecodableObject).key).to.equal(undefined);
    }
  });

  it("a frame that is not a WatchEvent rejects", async () => {
    const garbage = Buffer.from([0, 0, 0, 2, 0xff, 0xff]);
    let error: unknown;
    await read([garbage]).catch((e: unknown) => {
      error = e;
    });
    expect(error).to.be.instanceOf(Error);
  });
});
