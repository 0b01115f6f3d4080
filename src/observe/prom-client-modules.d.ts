// The declarations of prom-client's own modules that src/observe/prom-client.ts imports: each exports what its
// index re-exports under that name (prom-client 15, lib/*.js: `module.exports = <that>`).
declare module "prom-client/lib/counter.js" {
  import { Counter } from "prom-client";
  export = Counter;
}
declare module "prom-client/lib/defaultMetrics.js" {
  import { collectDefaultMetrics } from "prom-client";
  export = collectDefaultMetrics;
}
declare module "prom-client/lib/gauge.js" {
  import { Gauge } from "prom-client";
  export = Gauge;
}
declare module "prom-client/lib/histogram.js" {
  import { Histogram } from "prom-client";
  export = Histogram;
}
declare module "prom-client/lib/registry.js" {
  import { Registry } from "prom-client";
  export = Registry;
}
