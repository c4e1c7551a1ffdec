import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.js";
import { logLinesOf } from "../support/supervised-output.js";
import {
  requestIdOf,
  startTwoWorkerEdge,
  type TwoWorkerEdge,
} from "../support/two-worker-edge.js";

/**
 * The metrics of an edge of two workers (the gateway's entry, as `npm start` runs its edge):
 * METRICS_PORT is served by the cluster's primary, which sums what every worker counted.
 */
let lab: TwoWorkerEdge;
let metricsPort: number;

beforeAll(async () => {
  metricsPort = await freePort();
  lab = await startTwoWorkerEdge("metrics-cluster", {
    METRICS_PORT: String(metricsPort),
  });
}, 200_000);

afterAll(async () => {
  await lab?.stop();
});

/** `{ __typename }` on a connection of its own, so that requests spread over the workers. */
const typename = async (requestId: string) =>
  (await lab.post({ query: "{ __typename }" }, requestId)).status;

describe("metrics of an edge of two workers", () => {
  it("the primary's METRICS_PORT sums the requests both workers answered", async () => {
    const answeredBy = () =>
      new Set(
        logLinesOf(lab.edge.output())
          .filter((line) => requestIdOf(line).startsWith("count-"))
          .map((line) => line.pid),
      );
    let sent = 0;
    for (let batch = 0; batch < 50 && answeredBy().size < 2; batch++) {
      const statuses = await Promise.all(
        Array.from({ length: 8 }, (_, i) => typename(`count-${batch}-${i}`)),
      );
      expect(statuses.every((status) => status === 200)).toBe(true);
      sent += statuses.length;
      await lab.waitFor(
        () =>
          logLinesOf(lab.edge.output()).filter((line) =>
            requestIdOf(line).startsWith(`count-${batch}-`),
          ).length === 8,
        "the request lines",
      );
    }
    expect(answeredBy().size).toBe(2);

    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    const line = text
      .split("\n")
      .find(
        (l) =>
          l.startsWith("platform_http_requests_total{") &&
          l.includes('interface="graphql"') &&
          l.includes('status="200"'),
      );
    expect(Number(line?.slice(line.lastIndexOf(" ") + 1))).toBe(sent);
    // The primary's own process, named apart: read against the kernel's account of the workers' parent.
    const workerPid = [...answeredBy()][0]!;
    const primaryPid = Number(readFileSync(`/proc/${workerPid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
    const bootTime = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))![1]);
    const startTicks = Number(readFileSync(`/proc/${primaryPid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]);
    const exported = (name: string) => Number(text.split("\n").find((l) => l.startsWith(`${name} `))?.split(" ")[1]);
    expect(Math.abs(exported("edge_primary_process_start_time_seconds") - (bootTime + startTicks / 100))).toBeLessThanOrEqual(2);
    expect(exported("edge_primary_process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(text).toMatch(/^edge_primary_nodejs_eventloop_lag_seconds /m);
    // The public port does not serve them.
    expect((await fetch(`http://127.0.0.1:${lab.port}/metrics`)).status).toBe(
      404,
    );
  }, 120_000);
});
