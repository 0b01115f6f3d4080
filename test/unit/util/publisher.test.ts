// Publisher (util/publisher.ts): every listener hears every value, whichever of them throws.
import { expect } from "chai";
import { Publisher } from "../../../src/util/publisher.js";

describe("util/Publisher", () => {
  const thrower = (message: string) => () => {
    throw new Error(message);
  };

  it("reports each listener that threw, with the value, and the listeners after it still hear the value", () => {
    const failed: string[] = [];
    const heard: number[] = [];
    const publisher = new Publisher<number>((error, value) => failed.push(`${(error as Error).message} on ${value}`));
    publisher.subscribe(thrower("first"));
    publisher.subscribe((value) => heard.push(value));
    publisher.subscribe(thrower("third"));
    publisher.publish(7);
    expect(heard).to.deep.equal([7]);
    expect(failed).to.deep.equal(["first on 7", "third on 7"]);
  });

  it("without a reporter, throws to its caller after every listener heard the value: the one error, or all of them", () => {
    const heard: number[] = [];
    const one = new Publisher<number>();
    one.subscribe(thrower("only"));
    one.subscribe((value) => heard.push(value));
    expect(() => one.publish(1)).to.throw("only");

    const two = new Publisher<number>();
    two.subscribe(thrower("a"));
    two.subscribe((value) => heard.push(value));
    two.subscribe(thrower("b"));
    let caught: unknown;
    try {
      two.publish(2);
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(AggregateError);
    expect((caught as AggregateError).errors.map((error: Error) => error.message)).to.deep.equal(["a", "b"]);
    expect(heard).to.deep.equal([1, 2]);
  });
});
