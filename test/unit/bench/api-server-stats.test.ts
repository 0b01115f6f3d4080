// The API server's /metrics as the fleet rollout reads them: the process collector's figures and the watches served.
import { expect } from "chai";
import { readApiServerMetrics, requestsBetween } from "../../../bench/lib/api-server-stats.js";
import type { BenchClient } from "../../../bench/lib/kube-client.js";

const serving = (text: string) => ({ text: async () => text }) as unknown as BenchClient;

const METRICS = `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
process_resident_memory_bytes 3.2e+08
go_memstats_heap_inuse_bytes 1.5e+08
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"} 7
apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="cluster",subresource="",verb="WATCH",version="v1"} 3
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="namespace",subresource="exec",verb="CONNECT",version="v1"} 2
process_cpu_seconds_total_other 99
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 4
apiserver_request_total{code="410",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 1
apiserver_request_total{code="201",component="apiserver",dry_run="",group="authorization.k8s.io",resource="selfsubjectaccessreviews",scope="cluster",subresource="",verb="POST",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 9
`;

describe("bench: the API server's /metrics", () => {
  it("reads its CPU, RSS and Go heap, and sums the watches it serves (not other long-running requests)", async () => {
    expect(await readApiServerMetrics(serving(METRICS))).to.deep.equal({
      cpuSeconds: 12.5,
      rssBytes: 3.2e8,
      heapInuseBytes: 1.5e8,
      watches: 10,
      requests: { "LIST pods": 5, "POST selfsubjectaccessreviews": 2, "PATCH pods/status": 9 },
    });
  });

  it("counts the requests between two readings, those that changed only", async () => {
    const before = await readApiServerMetrics(serving(METRICS));
    const after = await readApiServerMetrics(
      serving(METRICS.replace('verb="LIST",version="v1"} 4', 'verb="LIST",version="v1"} 104')),
    );
    expect(requestsBetween(before, after)).to.deep.equal({ "LIST pods": 100 });
  });

  it("names a figure the server does not expose", async () => {
    const error = await readApiServerMetrics(serving("process_cpu_seconds_total 1\n")).catch((e: Error) => e);
    expect(String(error)).to.include("process_resident_memory_bytes");
  });
});
