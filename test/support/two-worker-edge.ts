import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { MikroORM } from "@mikro-orm/postgresql";
import { IdentityService } from "../../identity/identity.service.js";
import { openIdentityStore } from "../../identity/index.js";
import { createTestDatabase } from "./database.js";
import { freePort } from "./free-port.js";
import { spawnService, TSX, type ServiceProcess } from "./service-process.js";
import { alive, startedPidsOf } from "./supervised-output.js";
import { TEST_SECRET } from "./subgraph-harness.js";

/** The gateway's entry with two workers, as `npm start` runs its edge, over a key store and no subgraph. */
export interface TwoWorkerEdge {
  port: number;
  edge: ServiceProcess;
  /** Waits until `predicate` holds, failing at once with the edge's output if it exits. */
  waitFor(
    predicate: () => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<void>;
  /** A POST to /graphql with a live key on a connection of its own, so that requests spread over the workers. */
  post(
    body: object,
    requestId: string,
  ): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

/** The x-request-id a request line logged. */
export const requestIdOf = (line: object) =>
  (line as { req?: { headers?: Record<string, string> } }).req?.headers?.[
    "x-request-id"
  ] ?? "";

export async function startTwoWorkerEdge(
  name: string,
  env: Record<string, string> = {},
): Promise<TwoWorkerEdge> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `${name}-`));
  const database = await createTestDatabase();
  let identityOrm: MikroORM | undefined;
  let edge: ServiceProcess | undefined;
  const stop = async () => {
    if (edge && edge.child.exitCode === null) {
      edge.child.kill("SIGTERM");
      await edge.exited;
    }
    for (const pids of edge ? startedPidsOf(edge.output()).values() : [])
      for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
    await identityOrm?.close(true);
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  const waitFor = async (
    predicate: () => boolean,
    what: string,
    timeoutMs = 120_000,
  ) => {
    const until = Date.now() + timeoutMs;
    while (!predicate()) {
      if (edge?.child.exitCode !== null)
        throw new Error(
          `the edge exited while waiting for ${what}:\n${edge?.output()}`,
        );
      if (Date.now() > until)
        throw new Error(
          `timed out waiting for ${what}:\n${edge?.output().slice(-4000)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  try {
    identityOrm = await openIdentityStore(database.url);
    const key = (
      await new IdentityService(identityOrm.em.fork()).createKey({
        account: name,
        kind: "live",
      })
    ).secret;
    const port = await freePort();
    const { REDIS_URL: _none, ...inherited } = process.env;
    edge = spawnService(TSX, ["platform/entries/gateway.ts"], {
      ...inherited,
      NODE_ENV: "development",
      LOG_LEVEL: "info",
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      INTERNAL_SECRET: TEST_SECRET,
      HOST: "127.0.0.1",
      PORT: String(port),
      EDGE_WORKERS: "2",
      // __typename needs no subgraph: none runs.
      MEMBERSHIP_URL: "http://127.0.0.1:1/graphql",
      MARKETPLACE_URL: "http://127.0.0.1:1/graphql",
      INFERENCE_URL: "http://127.0.0.1:1/graphql",
      TRACEROUTE_URL: "http://127.0.0.1:1/graphql",
      ...env,
    });
    await waitFor(
      () => edge!.output().includes("is up at"),
      "the edge to start",
      180_000,
    );
    const post = (body: object, requestId: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const request = http.request(
          {
            host: "127.0.0.1",
            port,
            method: "POST",
            path: "/graphql",
            agent: false,
            headers: {
              authorization: `Bearer ${key}`,
              "content-type": "application/json",
              "x-request-id": requestId,
            },
          },
          (response) => {
            let text = "";
            response
              .setEncoding("utf8")
              .on("data", (chunk: string) => (text += chunk));
            response.on("end", () =>
              resolve({ status: response.statusCode ?? 0, text }),
            );
          },
        );
        request.on("error", reject);
        request.end(JSON.stringify(body));
      });
    return { port, edge, waitFor, post, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
