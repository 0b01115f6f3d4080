// Tests for DueHeap: pops in due order (FIFO on ties) through reschedules and deletions.

import { expect } from "chai";
import fc from "fast-check";
import { DueHeap } from "../../../src/queue/due-heap.js";

describe("DueHeap", () => {
  it("pops in due order, ties in insertion order", () => {
    const heap = new DueHeap<string>();
    heap.set("c", 30);
    heap.set("a", 10);
    heap.set("b", 10);
    expect(heap.peek()).to.deep.equal({ key: "a", due: 10 });
    expect([heap.pop()?.key, heap.pop()?.key, heap.pop()?.key, heap.pop()]).to.deep.equal(["a", "b", "c", undefined]);
  });

  it("reschedules and deletes by key", () => {
    const heap = new DueHeap<string>();
    heap.set("a", 10);
    heap.set("b", 20);
    heap.set("b", 5);
    expect(heap.dueOf("b")).to.equal(5);
    expect(heap.size).to.equal(2);
    expect(heap.delete("b")).to.equal(true);
    expect(heap.delete("b")).to.equal(false);
    expect(heap.has("b")).to.equal(false);
    expect(heap.peek()?.key).to.equal("a");
  });

  it("property: matches a sorted model under random set/delete/pop", () => {
    type Op = { kind: "set"; key: number; due: number } | { kind: "delete"; key: number } | { kind: "pop" };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant("set" as const), key: fc.nat(15), due: fc.nat(50) }),
      fc.record({ kind: fc.constant("delete" as const), key: fc.nat(15) }),
      fc.record({ kind: fc.constant("pop" as const) }),
    );
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), (ops) => {
        const heap = new DueHeap<number>();
        const model = new Map<number, { due: number; seq: number }>();
        let seq = 0;
        for (const op of ops) {
          if (op.kind === "set") {
            const existing = model.get(op.key);
            model.set(op.key, { due: op.due, seq: existing?.seq ?? seq++ });
            heap.set(op.key, op.due);
          } else if (op.kind === "delete") {
            expect(heap.delete(op.key)).to.equal(model.delete(op.key));
          } else {
            const best = [...model].sort(([, a], [, b]) => a.due - b.due || a.seq - b.seq)[0];
            const popped = heap.pop();
            if (!best) {
              expect(popped).to.equal(undefined);
            } else {
              expect(popped).to.deep.equal({ key: best[0], due: best[1].due });
              model.delete(best[0]);
            }
          }
          expect(heap.size).to.equal(model.size);
        }
      }),
    );
  });
});
