// RBAC's matching of a rules review's rules against one permission: wildcards, subresources and resourceNames.
import { expect } from "chai";
import { type Permission, type ResourceRule, rulesGrant } from "../../../src/kube/rbac-rules.js";

const pods = (verb: string, extra: Partial<Permission> = {}): Permission => ({
  verb,
  group: "",
  resource: "pods",
  ...extra,
});

describe("rulesGrant", () => {
  const cases: [string, ResourceRule, Permission, boolean][] = [
    [
      "the verb, group and resource named",
      { verbs: ["delete"], apiGroups: [""], resources: ["pods"] },
      pods("delete"),
      true,
    ],
    ["another verb", { verbs: ["get"], apiGroups: [""], resources: ["pods"] }, pods("delete"), false],
    ["any verb", { verbs: ["*"], apiGroups: [""], resources: ["pods"] }, pods("delete"), true],
    ["another group", { verbs: ["*"], apiGroups: ["apps"], resources: ["pods"] }, pods("get"), false],
    ["any group", { verbs: ["*"], apiGroups: ["*"], resources: ["pods"] }, pods("get"), true],
    ["no group listed", { verbs: ["*"], resources: ["pods"] }, pods("get"), false],
    ["any resource", { verbs: ["get"], apiGroups: [""], resources: ["*"] }, pods("get", { subresource: "log" }), true],
    [
      "the resource, asked for a subresource",
      { verbs: ["patch"], apiGroups: [""], resources: ["pods"] },
      pods("patch", { subresource: "status" }),
      false,
    ],
    [
      "the subresource",
      { verbs: ["patch"], apiGroups: [""], resources: ["pods/status"] },
      pods("patch", { subresource: "status" }),
      true,
    ],
    [
      "the subresource, asked for the resource",
      { verbs: ["patch"], apiGroups: [""], resources: ["pods/status"] },
      pods("patch"),
      false,
    ],
    [
      "*/status",
      { verbs: ["patch"], apiGroups: [""], resources: ["*/status"] },
      pods("patch", { subresource: "status" }),
      true,
    ],
    [
      "*/status, asked for another subresource",
      { verbs: ["get"], apiGroups: [""], resources: ["*/status"] },
      pods("get", { subresource: "log" }),
      false,
    ],
    // RBAC has no "<resource>/*": it is a literal that matches nothing a request names.
    [
      "pods/*",
      { verbs: ["patch"], apiGroups: [""], resources: ["pods/*"] },
      pods("patch", { subresource: "status" }),
      false,
    ],
    [
      "a name listed, asked by that name",
      { verbs: ["get"], apiGroups: [""], resources: ["pods"], resourceNames: ["a"] },
      pods("get", { name: "a" }),
      true,
    ],
    [
      "a name listed, asked by another",
      { verbs: ["get"], apiGroups: [""], resources: ["pods"], resourceNames: ["a"] },
      pods("get", { name: "b" }),
      false,
    ],
    [
      "a name listed, asked without one (a list)",
      { verbs: ["list"], apiGroups: [""], resources: ["pods"], resourceNames: ["a"] },
      pods("list"),
      false,
    ],
    [
      "no names listed, asked by name",
      { verbs: ["get"], apiGroups: [""], resources: ["pods"], resourceNames: [] },
      pods("get", { name: "a" }),
      true,
    ],
  ];
  for (const [name, rule, permission, granted] of cases) {
    it(`${name}: ${granted ? "granted" : "not granted"}`, () => {
      expect(rulesGrant([rule], permission)).to.equal(granted);
    });
  }

  it("any one rule of several is enough; none is nothing", () => {
    const rules: ResourceRule[] = [
      { verbs: ["get"], apiGroups: [""], resources: ["pods"] },
      { verbs: ["delete"], apiGroups: [""], resources: ["pods"] },
    ];
    expect(rulesGrant(rules, pods("delete"))).to.equal(true);
    expect(rulesGrant(rules, pods("watch"))).to.equal(false);
    expect(rulesGrant([], pods("get"))).to.equal(false);
  });
});
