// The bench's parameters: the switches that leave scenarios out, and a bad value named with what is wrong.
import { expect } from "chai";
import { readParams } from "../../../bench/params.js";

describe("bench: parameters", () => {
  it("runs the outages and the unexplained wave at the issue's sizes by default", () => {
    const { outage } = readParams({});
    expect(outage).to.deep.include({ pods: 110, nodes: 10, nodePods: 100, unexplainedPods: 110, rounds: 3 });
  });

  it("keeps the smoke run's outages tiny", () => {
    const { outage } = readParams({ BENCH_SMOKE: "1" });
    expect(outage.nodes * outage.nodePods).to.be.at.most(10);
    expect(outage.unexplainedPods).to.be.at.most(10);
  });

  it("lets 0 rounds leave the side-by-side and the outage runs out", () => {
    const params = readParams({ BENCH_SIDE_ROUNDS: "0", BENCH_OUTAGE_ROUNDS: "0" });
    expect(params.side.rounds).to.equal(0);
    expect(params.outage.rounds).to.equal(0);
  });

  it("skips the unexplained wave when the node has no healthy pods, unless it is asked for", () => {
    expect(readParams({ BENCH_SIDE_PODS: "0" }).outage.unexplainedPods).to.equal(0);
    expect(() => readParams({ BENCH_SIDE_PODS: "100", BENCH_UNEXPLAINED_PODS: "110" })).to.throw(
      /BENCH_UNEXPLAINED_PODS=110 .*BENCH_SIDE_PODS=100/,
    );
  });

  it("rolls out 100 instances of each controller, 30 pods a node, by default; 4 in the smoke run; 0 nodes skip it", () => {
    expect(readParams({}).fleet).to.deep.include({ nodes: 100, podsPerNode: 30, rounds: 3 });
    expect(readParams({ BENCH_SMOKE: "1" }).fleet).to.deep.include({ nodes: 4, rounds: 1 });
    expect(readParams({ BENCH_FLEET_NODES: "0" }).fleet.nodes).to.equal(0);
    expect(() => readParams({ BENCH_FLEET_NODES: "-1" })).to.throw(/BENCH_FLEET_NODES=-1/);
  });

  it("runs no cluster-wide trial with BENCH_SIZES=none", () => {
    expect(readParams({ BENCH_SIZES: "none" })).to.deep.include({ sizes: [], pods: 0 });
  });

  it("takes a candidate's variables as NAME=VALUE words, and names a word that is not one", () => {
    const { candidate } = readParams({ BENCH_CANDIDATE_ENV: " CNI_REPAIR_V8_FLAGS=--no-opt,--no-maglev  X=a=b " });
    expect(candidate?.env).to.deep.equal({ CNI_REPAIR_V8_FLAGS: "--no-opt,--no-maglev", X: "a=b" });
    expect(candidate?.nodeFlags).to.deep.equal([]);
    expect(readParams({}).candidate).to.equal(undefined);
    expect(() => readParams({ BENCH_CANDIDATE_ENV: "--no-opt" })).to.throw(/BENCH_CANDIDATE_ENV.*"--no-opt"/);
  });

  it("names a value that is not a count", () => {
    expect(() => readParams({ BENCH_OUTAGE_NODES: "ten" })).to.throw(/BENCH_OUTAGE_NODES=ten/);
  });
});
