// Unit tests for ApiError, parseRetryAfter and apiErrorFromResponse (Status bodies, proxy pages, Retry-After).

import { expect } from "chai";
import fc from "fast-check";
import { ApiError, apiErrorFromResponse, parseRetryAfter } from "../../../src/kube/api-error.js";

const NOW = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
/** The cap on a Retry-After, 10 minutes (a literal: a cap changed by mistake must fail here). */
const MAX_RETRY_AFTER_MS = 600_000;

describe("kube/api-error", () => {
  describe("parseRetryAfter", () => {
    it("is undefined when the header is absent or empty", () => {
      expect(parseRetryAfter(undefined, NOW)).to.equal(undefined);
      expect(parseRetryAfter(null, NOW)).to.equal(undefined);
      expect(parseRetryAfter("", NOW)).to.equal(undefined);
      expect(parseRetryAfter("   ", NOW)).to.equal(undefined);
    });

    for (const [value, ms] of [
      ["0", 0],
      ["1", 1000],
      ["120", 120_000],
      [" 7 ", 7000],
      ["007", 7000],
      ["\t30\r\n", 30_000],
    ] as const) {
      it(`reads delta-seconds ${JSON.stringify(value)} as ${ms} ms`, () => {
        expect(parseRetryAfter(value, NOW)).to.equal(ms);
      });
    }

    it("reads any whole number of seconds as that many thousand milliseconds, capped at 10 minutes", () => {
      fc.assert(
        fc.property(fc.nat({ max: 10_000_000 }), (seconds) => {
          expect(parseRetryAfter(String(seconds), NOW)).to.equal(Math.min(seconds * 1000, MAX_RETRY_AFTER_MS));
        }),
      );
    });

    it("caps a huge number or a far-future date (a timer that long would fire at once)", () => {
      expect(parseRetryAfter("9".repeat(400), NOW)).to.equal(MAX_RETRY_AFTER_MS);
      expect(parseRetryAfter("Fri, 01 Jan 2100 00:00:00 GMT", NOW)).to.equal(MAX_RETRY_AFTER_MS);
    });

    it("reads an HTTP date as the time from now until then", () => {
      expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", NOW)).to.equal(30_000);
      expect(parseRetryAfter("Wed, 21 Oct 2015 07:33:00 GMT", NOW)).to.equal(300_000);
      expect(parseRetryAfter("  Wed, 21 Oct 2015 07:28:01 GMT  ", NOW)).to.equal(1000);
    });

    it("clamps a date in the past (or now) to 0", () => {
      expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", NOW)).to.equal(0);
      expect(parseRetryAfter("Tue, 20 Oct 2015 07:28:00 GMT", NOW)).to.equal(0);
      expect(parseRetryAfter("Thu, 01 Jan 1970 00:00:00 GMT", NOW)).to.equal(0);
    });

    it("measures a date from Date.now() by default", () => {
      const inAMinute = new Date(Date.now() + 60_000).toUTCString();
      const ms = parseRetryAfter(inAMinute);
      // toUTCString drops milliseconds, and a little time passes before the call.
      expect(ms).to.be.a("number").within(58_000, 60_000);
    });

    for (const garbage of [
      "soon",
      "5 seconds",
      "1e3",
      "0x10",
      "12abc",
      "abc123",
      "NaN",
      "Infinity",
      "later, maybe",
      "-1",
      "1.5",
    ]) {
      it(`is undefined for garbage ${JSON.stringify(garbage)}`, () => {
        expect(parseRetryAfter(garbage, NOW)).to.equal(undefined);
      });
    }
  });

  describe("ApiError", () => {
    it("is an Error with name, code, status, reason and Retry-After", () => {
      const cause = new Error("socket hang up");
      const error = new ApiError("GET /api/v1/pods: 503", {
        status: 503,
        reason: "ServiceUnavailable",
        retryAfterMs: 2000,
        cause,
      });
      expect(error).to.be.instanceOf(Error);
      expect(error.name).to.equal("ApiError");
      expect(error.code).to.equal("ERR_KUBE_API");
      expect(error.message).to.equal("GET /api/v1/pods: 503");
      expect(error.status).to.equal(503);
      expect(error.reason).to.equal("ServiceUnavailable");
      expect(error.retryAfterMs).to.equal(2000);
      expect(error.cause).to.equal(cause);
    });

    it("leaves reason, Retry-After and cause undefined when not given", () => {
      const error = new ApiError("x", { status: 500 });
      expect(error.reason).to.equal(undefined);
      expect(error.retryAfterMs).to.equal(undefined);
      expect(error.cause).to.equal(undefined);
    });

    describe("codeLabel", () => {
      it('is "error" when no response came back (status 0)', () => {
        expect(new ApiError("connection refused", { status: 0 }).codeLabel).to.equal("error");
      });

      for (const status of [200, 201, 404, 409, 410, 429, 500, 503]) {
        it(`is "${status}" for HTTP ${status}`, () => {
          expect(new ApiError("x", { status }).codeLabel).to.equal(String(status));
        });
      }
    });
  });

  describe("apiErrorFromResponse", () => {
    it("takes reason and message from a Status body", () => {
      const body = JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'pods "reviews-1" is forbidden: User "system:serviceaccount:x:y" cannot delete resource "pods"',
        reason: "Forbidden",
        details: { name: "reviews-1", kind: "pods" },
        code: 403,
      });
      const error = apiErrorFromResponse("DELETE /api/v1/namespaces/shop/pods/reviews-1", 403, body, null);
      expect(error).to.be.instanceOf(ApiError);
      expect(error.message).to.equal(
        'DELETE /api/v1/namespaces/shop/pods/reviews-1: 403 Forbidden: pods "reviews-1" is forbidden: ' +
          'User "system:serviceaccount:x:y" cannot delete resource "pods"',
      );
      expect(error.status).to.equal(403);
      expect(error.reason).to.equal("Forbidden");
      expect(error.retryAfterMs).to.equal(undefined);
      expect(error.codeLabel).to.equal("403");
    });

    it("reads Retry-After into retryAfterMs", () => {
      const body = JSON.stringify({ kind: "Status", reason: "TooManyRequests", message: "slow down", code: 429 });
      const error = apiErrorFromResponse("GET /api/v1/pods", 429, body, "3");
      expect(error.message).to.equal("GET /api/v1/pods: 429 TooManyRequests: slow down");
      expect(error.retryAfterMs).to.equal(3000);
    });

    it("ignores an unreadable Retry-After", () => {
      expect(apiErrorFromResponse("GET /x", 503, "", "whenever").retryAfterMs).to.equal(undefined);
    });

    it("reads a Conflict Status (the precondition failure of a stale resourceVersion)", () => {
      const body = JSON.stringify({
        kind: "Status",
        status: "Failure",
        message: 'Operation cannot be fulfilled on pods "a": the object has been modified',
        reason: "Conflict",
        code: 409,
      });
      const error = apiErrorFromResponse("PATCH /api/v1/namespaces/shop/pods/a", 409, body, null);
      expect(error.reason).to.equal("Conflict");
      expect(error.status).to.equal(409);
    });

    it("keeps the start of a non-JSON body (a proxy's error page) as the message, with no reason", () => {
      const page = "<html><body><h1>502 Bad Gateway</h1></body></html>";
      const error = apiErrorFromResponse("GET /api/v1/pods", 502, page, null);
      expect(error.message).to.equal(`GET /api/v1/pods: 502: ${page}`);
      expect(error.reason).to.equal(undefined);
      expect(error.status).to.equal(502);
    });

    it("cuts a long non-JSON body to 300 characters", () => {
      const page = `<html>${"x".repeat(1000)}</html>`;
      const error = apiErrorFromResponse("GET /x", 500, page, null);
      expect(error.message).to.equal(`GET /x: 500: ${page.slice(0, 300)}`);
    });

    it("copes with an empty body", () => {
      const error = apiErrorFromResponse("GET /x", 503, "", "10");
      expect(error.message).to.equal("GET /x: 503: ");
      expect(error.reason).to.equal(undefined);
      expect(error.retryAfterMs).to.equal(10_000);
    });

    it("falls back to the body text when the JSON has no string reason or message", () => {
      const body = '{"reason":42,"message":{"nested":true}}';
      const error = apiErrorFromResponse("GET /x", 500, body, null);
      expect(error.reason).to.equal(undefined);
      expect(error.message).to.equal(`GET /x: 500: ${body}`);
    });

    it("uses the message without a reason when the Status has none", () => {
      const error = apiErrorFromResponse("GET /x", 500, '{"message":"etcdserver: request timed out"}', null);
      expect(error.message).to.equal("GET /x: 500: etcdserver: request timed out");
      expect(error.reason).to.equal(undefined);
    });

    it("uses the reason and keeps the body text when the Status has no message", () => {
      const body = '{"reason":"Expired"}';
      const error = apiErrorFromResponse("GET /x", 410, body, null);
      expect(error.reason).to.equal("Expired");
      expect(error.message).to.equal(`GET /x: 410 Expired: ${body}`);
    });

    for (const body of ["null", "42", '"text"', "[1,2]", "true"]) {
      it(`does not throw on JSON that is not an object: ${body}`, () => {
        const error = apiErrorFromResponse("GET /x", 500, body, null);
        expect(error.reason).to.equal(undefined);
        expect(error.message).to.equal(`GET /x: 500: ${body}`);
      });
    }

    it("never throws, whatever the body and header", () => {
      fc.assert(
        fc.property(
          fc.string(),
          fc.integer({ min: 100, max: 599 }),
          fc.string(),
          fc.option(fc.string(), { nil: null }),
          (what, status, body, retryAfter) => {
            const error = apiErrorFromResponse(what, status, body, retryAfter);
            expect(error).to.be.instanceOf(ApiError);
            expect(error.status).to.equal(status);
            expect(error.codeLabel).to.equal(String(status));
            expect(error.message.startsWith(`${what}: ${status}`)).to.equal(true);
          },
        ),
      );
    });
  });

  describe("throttled", () => {
    it("is true for 429 with or without Retry-After, and for 503 only with it", () => {
      expect(new ApiError("x", { status: 429 }).throttled).to.equal(true);
      expect(new ApiError("x", { status: 429, retryAfterMs: 3000 }).throttled).to.equal(true);
      expect(new ApiError("x", { status: 503, retryAfterMs: 1000 }).throttled).to.equal(true);
      expect(new ApiError("x", { status: 503 }).throttled).to.equal(false);
      for (const status of [0, 401, 403, 409, 500, 504]) {
        expect(new ApiError("x", { status, retryAfterMs: 1000 }).throttled, String(status)).to.equal(false);
      }
    });

    it("reads it from a response: 429 with a Status body and Retry-After", () => {
      const error = apiErrorFromResponse("DELETE /x", 429, '{"reason":"TooManyRequests","message":"slow"}', "2");
      expect(error.throttled).to.equal(true);
      expect(error.retryAfterMs).to.equal(2000);
    });
  });
});
