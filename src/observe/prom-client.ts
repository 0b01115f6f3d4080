// prom-client's registry, metric classes and process metrics, each from its own module rather than the package's
// index: the index also loads its Pushgateway and cluster aggregator, and with them node:cluster, node:zlib,
// node:https and node:url, which the controller never uses (~4 ms of every start's CPU; bench/README.md).
// Types are the package's own (prom-client-modules.d.ts); the modules are the ones its index re-exports.
export { default as Counter } from "prom-client/lib/counter.js";
export { default as collectDefaultMetrics } from "prom-client/lib/defaultMetrics.js";
export { default as Gauge } from "prom-client/lib/gauge.js";
export { default as Histogram } from "prom-client/lib/histogram.js";
export { default as Registry } from "prom-client/lib/registry.js";
