import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logLinesOf, startedPidsOf } from "../support/supervised-output.js";
import {
  requestIdOf,
  startTwoWorkerEdge,
  type TwoWorkerEdge,
} from "../support/two-worker-edge.js";

/**
 * Automatic persisted queries in an edge of two workers without Redis (the gateway's entry, as
 * `npm start` runs its edge): a query registered through one worker is found by its hash on both.
 */
let lab: TwoWorkerEdge;

beforeAll(async () => {
  lab = await startTwoWorkerEdge("apq-cluster");
}, 200_000);

afterAll(async () => {
  await lab?.stop();
});

/** A POST of an automatic persisted query on a connection of its own, so that requests spread over the workers. */
async function persisted(
  query: string,
  withQuery: boolean,
  requestId: string,
): Promise<{ data?: unknown; errors?: { extensions?: { code?: string } }[] }> {
  const sha256Hash = createHash("sha256").update(query).digest("hex");
  const { text } = await lab.post(
    {
      ...(withQuery ? { query } : {}),
      extensions: { persistedQuery: { version: 1, sha256Hash } },
    },
    requestId,
  );
  return JSON.parse(text);
}

describe("automatic persisted queries in an edge of two workers, without Redis", () => {
  it("a query registered through one worker is found by its hash on every worker", async () => {
    const query = "{ __typename registered: __typename }";
    expect((await persisted(query, true, "register")).errors).toBeUndefined();
    const workers = [
      ...(startedPidsOf(lab.edge.output()).get("gateway worker 1") ?? []),
      ...(startedPidsOf(lab.edge.output()).get("gateway worker 2") ?? []),
    ];
    expect(workers).toHaveLength(2);
    // Looked up by hash in batches of new connections until both workers have answered some.
    const answeredBy = () =>
      new Set(
        logLinesOf(lab.edge.output())
          .filter((line) => requestIdOf(line).startsWith("lookup-"))
          .map((line) => line.pid),
      );
    const answers = [];
    for (let batch = 0; batch < 50 && answeredBy().size < 2; batch++) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            persisted(query, false, `lookup-${batch}-${i}`),
          ),
        )),
      );
      await lab.waitFor(
        () =>
          logLinesOf(lab.edge.output()).filter((line) =>
            requestIdOf(line).startsWith(`lookup-${batch}-`),
          ).length === 8,
        "the request lines",
      );
    }
    expect([...answeredBy()].sort()).toEqual([...workers].sort());
    for (const answer of answers) {
      expect(answer.errors).toBeUndefined();
      expect(answer.data).toEqual({ __typename: "Query", registered: "Query" });
    }
  }, 120_000);
});
