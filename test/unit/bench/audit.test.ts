// The bench's audit-log readers: DELETE requests and repeat deletes per broken pod, counted the way the
// side-by-side table reports them (a controller's requests only, any answer; the bench's own are not counted).
import { expect } from "chai";
import {
  controllerDeleteRequests,
  deletedTwice,
  deletionWindows,
  maxInFlight,
  repairTimings,
} from "../../../bench/lib/audit.js";

const line = (verb: string, name: string, userAgent: string, code: number, at: string) => ({
  verb,
  userAgent,
  objectRef: { namespace: "bench-victims-0", name, ...(verb === "patch" && { subresource: "status" }) },
  responseStatus: { code },
  requestReceivedTimestamp: at,
  stageTimestamp: at,
});

const lines = [
  line("patch", "a", "bench-break/1", 200, "2026-12-04T10:00:00.000100Z"),
  line("patch", "b", "bench-break/1", 200, "2026-12-04T10:00:00.000200Z"),
  line("delete", "a", "istio-repair/unknown", 200, "2026-12-04T10:00:00.005100Z"),
  // Deleted again while going (200), then once it was gone (404).
  line("delete", "a", "istio-repair/unknown", 200, "2026-12-04T10:00:00.007000Z"),
  line("delete", "a", "istio-repair/unknown", 404, "2026-12-04T10:00:00.009000Z"),
  line("delete", "b", "istio-repair/unknown", 200, "2026-12-04T10:00:00.010200Z"),
  // The fake kubelet finishing them: the bench's own requests.
  line("delete", "a", "bench-kubelet/1", 200, "2026-12-04T10:00:00.006000Z"),
  line("delete", "b", "bench-kubelet/1", 200, "2026-12-04T10:00:00.011000Z"),
  // Another run's pod.
  line("delete", "c", "istio-repair/unknown", 200, "2026-12-04T10:00:00.012000Z"),
];
const keys = ["bench-victims-0/a", "bench-victims-0/b"];

describe("bench: audit-log figures", () => {
  it("counts every controller DELETE of the given pods, 404s and repeats included, none of the bench's", () => {
    expect(controllerDeleteRequests(lines, keys)).to.equal(4);
  });

  it("counts the pods a controller deleted successfully more than once", () => {
    expect(deletedTwice(lines, keys)).to.equal(1);
    expect(deletedTwice(lines, ["bench-victims-0/b"])).to.equal(0);
  });

  it("pairs each break with the controller's first successful DELETE, to the microsecond", () => {
    const timings = repairTimings(lines, keys);
    expect(timings.map((t) => t.key)).to.deep.equal(keys);
    expect((timings[0]?.deletedAtMs ?? 0) - (timings[0]?.brokenAtMs ?? 0)).to.be.closeTo(5, 1e-6);
    expect((timings[1]?.deletedAtMs ?? 0) - (timings[1]?.brokenAtMs ?? 0)).to.be.closeTo(10, 1e-6);
  });

  it("notes when the server received the first controller DELETE, apart from when it answered it", () => {
    const split = [
      line("patch", "a", "bench-break/1", 200, "2026-12-04T10:00:00.000100Z"),
      {
        ...line("delete", "a", "cni-repair/1", 200, "2026-12-04T10:00:00.003100Z"),
        stageTimestamp: "2026-12-04T10:00:00.008100Z",
      },
      line("delete", "a", "cni-repair/1", 200, "2026-12-04T10:00:00.009000Z"),
    ];
    const [timing] = repairTimings(split, ["bench-victims-0/a"]);
    expect((timing?.deleteReceivedMs ?? 0) - (timing?.brokenAtMs ?? 0)).to.be.closeTo(3, 1e-6);
    expect((timing?.deletedAtMs ?? 0) - (timing?.deleteReceivedMs ?? 0)).to.be.closeTo(5, 1e-6);
  });

  it("opens a pod's in-flight window at the controller's first successful DELETE and closes it at the kubelet's", () => {
    const windows = deletionWindows(lines, keys, "bench-kubelet/1");
    const open = (key: string) => {
      const [from, to] = windows.get(key) ?? [Number.NaN, Number.NaN];
      return [from - Date.parse("2026-12-04T10:00:00Z"), to - from];
    };
    // a: deleted at 5.1 ms, finished by the kubelet at 6.0 ms; b: deleted at 10.2 ms, finished at 11.0 ms.
    expect(open("bench-victims-0/a")[0]).to.be.closeTo(5.1, 1e-3);
    expect(open("bench-victims-0/a")[1]).to.be.closeTo(0.9, 1e-3);
    expect(open("bench-victims-0/b")[1]).to.be.closeTo(0.8, 1e-3);
    expect(windows.has("bench-victims-0/c")).to.equal(false);
  });

  it("times the window by when the server received each DELETE, not when it logged the answer", () => {
    const answeredLate = [
      line("delete", "a", "istio-repair/unknown", 200, "2026-12-04T10:00:00.005100Z"),
      // Received at 6.0 ms, its answer logged at 50 ms.
      {
        ...line("delete", "a", "bench-kubelet/1", 200, "2026-12-04T10:00:00.006000Z"),
        stageTimestamp: "2026-12-04T10:00:00.050000Z",
      },
    ];
    const [from, to] =
      deletionWindows(answeredLate, ["bench-victims-0/a"], "bench-kubelet/1").get("bench-victims-0/a") ?? [];
    expect((to ?? Number.NaN) - (from ?? Number.NaN)).to.be.closeTo(0.9, 1e-3);
  });

  it("takes a pod the kubelet never finished as gone at once", () => {
    const windows = deletionWindows(lines, keys, "some-other-finisher");
    const [from, to] = windows.get("bench-victims-0/a") ?? [];
    expect(to).to.equal(from);
  });

  it("counts the most windows open at one moment per group, touching windows not overlapping", () => {
    const windows = new Map<string, readonly [number, number]>([
      ["x/1", [0, 10]],
      ["x/2", [5, 15]],
      ["x/3", [10, 20]],
      ["y/1", [0, 100]],
      ["y/2", [1, 2]],
      ["y/3", [1, 3]],
      ["z/1", [7, 7]],
    ]);
    const namespace = (key: string) => key.split("/")[0] ?? "";
    expect(maxInFlight(windows, namespace)).to.equal(3);
    // From 1 to 2: x/1, y/1, y/2 and y/3.
    expect(maxInFlight(windows, () => "all")).to.equal(4);
    expect(
      maxInFlight(
        new Map([
          ["x/1", [0, 10] as const],
          ["x/2", [10, 20] as const],
        ]),
        namespace,
      ),
    ).to.equal(1);
    expect(maxInFlight(new Map(), namespace)).to.equal(0);
  });
});
