// admissionPolicyState: what a GET of the policy and its binding says, through a scripted transport.
import { expect } from "chai";
import { admissionPolicyState } from "../../../src/kube/admission-policies.js";
import { scriptedTransport } from "../../support/scripted-transport.js";

const API = "/apis/admissionregistration.k8s.io/v1";
const NAME = "cni-repair-own-node";

/** Answers GETs from a table of path → body; a path not in it is 404, a status number throws that status. */
function scripted(answers: Record<string, unknown>) {
  const { transport, calls } = scriptedTransport({
    request: (call) => {
      expect(call.method).to.equal("GET");
      const answer = answers[call.path];
      if (answer === undefined) return { status: 404 };
      return typeof answer === "number" ? { status: answer } : { body: answer };
    },
  });
  return {
    request: transport.request,
    get paths() {
      return calls.map((call) => call.path);
    },
  };
}

const policy = (body: unknown = { spec: { validations: [{ expression: "true" }] } }) => ({
  [`${API}/validatingadmissionpolicies/${NAME}`]: body,
});
const binding = (spec: unknown = { policyName: NAME, validationActions: ["Deny"] }) => ({
  [`${API}/validatingadmissionpolicybindings/${NAME}`]: { spec },
});

describe("admissionPolicyState", () => {
  it("enforced: the policy, and its binding denying with it; judgesTokenNode when it reads the token's node", async () => {
    const transport = scripted({ ...policy(), ...binding() });
    expect(await admissionPolicyState(transport, NAME)).to.deep.equal({
      name: NAME,
      state: "enforced",
      judgesTokenNode: false,
    });
    expect(transport.paths.sort()).to.deep.equal([
      `${API}/validatingadmissionpolicies/${NAME}`,
      `${API}/validatingadmissionpolicybindings/${NAME}`,
    ]);
    const nodeScoped = policy({
      spec: { variables: [{ expression: "request.userInfo.extra['authentication.kubernetes.io/node-name'][0]" }] },
    });
    expect(await admissionPolicyState(scripted({ ...nodeScoped, ...binding() }), NAME)).to.include({
      judgesTokenNode: true,
    });
  });

  it("missing: names what is absent", async () => {
    expect(await admissionPolicyState(scripted(policy()), NAME)).to.deep.equal({
      name: NAME,
      state: "missing",
      missing: ["binding"],
    });
    expect(await admissionPolicyState(scripted({}), NAME)).to.deep.include({ missing: ["policy", "binding"] });
  });

  it("not enforced: a binding of another policy, or one that only warns", async () => {
    const other = await admissionPolicyState(
      scripted({ ...policy(), ...binding({ policyName: "x", validationActions: ["Deny"] }) }),
      NAME,
    );
    expect(other).to.deep.equal({ name: NAME, state: "not-enforced", detail: 'its binding names policy "x"' });
    const warnOnly = await admissionPolicyState(
      scripted({ ...policy(), ...binding({ policyName: NAME, validationActions: ["Warn", "Audit"] }) }),
      NAME,
    );
    expect(warnOnly).to.deep.include({
      state: "not-enforced",
      detail: "its binding's validationActions are [Warn, Audit]",
    });
  });

  it("unknown: 403 says which permission is lacking; other failures pass their message on", async () => {
    const forbidden = await admissionPolicyState(scripted({ ...policy(403), ...binding() }), NAME);
    expect(forbidden.state).to.equal("unknown");
    expect(forbidden)
      .to.have.property("detail")
      .that.matches(/^forbidden: .*get validatingadmissionpolicies/);
    const unreachable = await admissionPolicyState(scripted({ ...policy(), ...binding(), ...policy(503) }), NAME);
    expect(unreachable).to.deep.include({ state: "unknown" });
    expect(unreachable).to.have.property("detail").that.includes("503");
  });
});
