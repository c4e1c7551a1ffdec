import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceConfigError } from '../../../../subgraphs/inference/config/inference-config-error.js';
import { inferenceConfigFrom } from '../../../../subgraphs/inference/config/load-inference-config.js';
import { createInferenceSubgraph } from '../../../../subgraphs/inference/index.js';
import { DEFAULT_RESPONSE_RETENTION_DAYS, ResponseRetention } from '../../../../subgraphs/inference/responses/response-retention.js';
import { ResponseStore } from '../../../../subgraphs/inference/responses/response-store.js';
import type { Subgraph } from '../../../../subgraphs/shared/subgraph.js';
import { capturedLogger } from '../../../support/captured-logger.js';
import { createTestDatabase } from '../../../support/database.js';
import { TEST_SECRET } from '../../../support/subgraph-harness.js';

/**
 * Kept responses expire after the configured days (OpenAI's 30 by default): an expired one reads
 * as absent at once, and the sweep deletes its row and no other.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let subgraph: Subgraph;

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createInferenceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET });
});
afterAll(async () => {
  await subgraph?.close();
  await db?.drop();
});

const kept = (id: string) => ({ response: { id, object: 'response', output: [{ id: `msg_${id}`, type: 'message' }] }, inputItems: [{ id: `in_${id}`, type: 'message' }] });

describe('response retention', () => {
  it('keeps responses the configured days, answers an expired one as absent, and sweeps only expired rows', async () => {
    const store = new ResponseStore(subgraph.orm as never, { retentionDays: 2, maxInputBytes: 1_048_576 });
    await store.keep('keyless', kept('resp_old'), null);
    await store.keep('keyless', kept('resp_new'), null);
    const [row] = await subgraph.orm.em.getConnection().execute<{ days: number }[]>(
      `select extract(epoch from "expires_at" - "created_at") / 86400 as days from "inference"."stored_response" where "id" = 'resp_new'`,
    );
    expect(Number(row!.days)).toBe(2);
    await subgraph.orm.em.getConnection().execute(`update "inference"."stored_response" set "expires_at" = now() - interval '1 second' where "id" = 'resp_old'`);
    expect(await store.get('keyless', 'resp_old')).toBeNull();
    expect((await store.items('keyless', ['msg_resp_old', 'in_resp_new'])).has('msg_resp_old')).toBe(false);

    const { logger } = capturedLogger();
    const retention = new ResponseRetention(subgraph.orm as never, logger);
    expect(await retention.sweep()).toBe(1);
    expect(await retention.sweep()).toBe(0);
    const ids = await subgraph.orm.em.getConnection().execute<{ id: string }[]>(`select "id" from "inference"."stored_response" order by "id"`);
    expect(ids.map((r) => r.id)).toEqual(['resp_new']);
    expect(await store.get('keyless', 'resp_new')).toMatchObject({ response: { id: 'resp_new' } });
    expect(await store.get('account:00000000-0000-0000-0000-000000000000', 'resp_new')).toBeNull();
  });

  it('reads responses.retentionDays (30 by default, 1 to 3650) and maxInputBytes (1 MiB, 0 to 25 MiB) from the inference config', () => {
    expect(DEFAULT_RESPONSE_RETENTION_DAYS).toBe(30);
    expect(inferenceConfigFrom({}, null).responses).toEqual({ retentionDays: 30, maxInputBytes: 1_048_576 });
    expect(inferenceConfigFrom({ responses: { retentionDays: 7, maxInputBytes: 0 } }, null).responses).toEqual({ retentionDays: 7, maxInputBytes: 0 });
    for (const bad of [0, 3651, 1.5]) expect(() => inferenceConfigFrom({ responses: { retentionDays: bad } }, null)).toThrow(InferenceConfigError);
    for (const bad of [-1, 26_214_401, 1.5]) expect(() => inferenceConfigFrom({ responses: { maxInputBytes: bad } }, null)).toThrow(InferenceConfigError);
  });
});
