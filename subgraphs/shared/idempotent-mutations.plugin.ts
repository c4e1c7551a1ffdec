import { createHash, randomUUID } from 'node:crypto';
import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import type { FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import { faultPoint } from '../../core/fault-points.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_RETENTION_MS, IDEMPOTENT_REPLAYED_HEADER } from '../../core/idempotency.js';
import type { SubgraphContext } from './context.js';
import { deferredPubSub, type DeferredPubSub } from './deferred-pubsub.js';

const VALID_KEY = /^[\x20-\x7e]{1,255}$/;
/** Expired outcomes removed after each kept one. */
const SWEEP_BATCH = 100;
/** The savepoint the mutation runs under, so a statement that failed leaves the outcome row writable. */
const SAVEPOINT = 'idempotent_mutation';
/** PostgreSQL's "current transaction is aborted": a statement failed outside any savepoint of the mutation's own. */
const IN_FAILED_TRANSACTION = '25P02';

interface Run {
  id: string;
  pubsub: DeferredPubSub;
}

/** Hex SHA-256 of what the gateway sent: the same client request plans the same fetches. */
function fingerprintOf(request: GraphQLRequestContext<SubgraphContext>['request']): string {
  return createHash('sha256')
    .update(`${request.operationName ?? ''}\u0000${request.query ?? ''}\u0000`)
    .update(JSON.stringify(request.variables ?? {}))
    .digest('hex');
}

/** Whether any root field of the mutation answered data (it reports a change that was made). */
function reportsChanges(result: FormattedExecutionResult): boolean {
  return !!result.data && Object.values(result.data).some((value) => value !== null);
}

/** Codes that say the mutation did not run: a dependency was down, or the caller may not run it (as Stripe keeps no result for a request that never started). */
const NOT_RUN = new Set(['SERVICE_UNAVAILABLE', 'FORBIDDEN', 'UNAUTHENTICATED']);

/** A failure that says the mutation could not run: a retry (by someone allowed, or once the dependency is back) must run it. */
function couldNotRun(result: FormattedExecutionResult): boolean {
  if (result.errors?.some((error) => error.extensions?.code === 'SERVICE_UNAVAILABLE')) return true;
  return !reportsChanges(result) && !!result.errors?.length && result.errors.every((error) => NOT_RUN.has(String(error.extensions?.code)));
}

/**
 * Runs a mutation that carries the edge's Idempotency-Key in one transaction with the record of
 * its answer (design: "idempotency is decided where the write happens"):
 * - The outcome row is inserted first. A concurrent request with the same key and fetch waits
 *   on that row's unique index until the first transaction ends, then replays what it committed,
 *   or runs if it rolled back. A retry after any crash therefore replays what committed and runs
 *   what did not, once.
 * - The mutation runs on the request's EntityManager inside the transaction (services'
 *   own transactions become savepoints); its events wait for the commit (deferred-pubsub.ts).
 * - Its answer, errors included, is stored and committed with its writes, as Stripe keeps even
 *   a 5xx. Not kept: a mutation that could not run (SERVICE_UNAVAILABLE, or refused to the caller
 *   with FORBIDDEN or UNAUTHENTICATED before it ran) and a transaction that
 *   failed without a domain answer (a deadlock, a lost connection): nothing of them committed,
 *   so a retry runs them again.
 */
export function idempotentMutations(options: { schema: string; logger: Logger }): ApolloServerPlugin<SubgraphContext> {
  const table = `"${options.schema}"."idempotent_outcome"`;

  async function sweep(context: SubgraphContext): Promise<void> {
    await context.em.fork().execute(
      `delete from ${table} where "id" in (select "id" from ${table} where "created_at" < ? order by "created_at" limit ${SWEEP_BATCH})`,
      [new Date(Date.now() - IDEMPOTENCY_RETENTION_MS)],
      'run',
    );
  }

  return {
    async requestDidStart() {
      let run: Run | undefined;
      return {
        async responseForOperation(requestContext) {
          const key = requestContext.request.http?.headers.get(IDEMPOTENCY_KEY_HEADER);
          if (requestContext.operation?.operation !== 'mutation' || !key || !VALID_KEY.test(key)) return null;
          const context = requestContext.contextValue;
          const { em, principal } = context;
          const fingerprint = fingerprintOf(requestContext.request);
          const id = randomUUID();
          const now = new Date();
          await em.begin();
          try {
            // An expired outcome of the same key and fetch is replaced, as if absent.
            const claimed = await em.execute<{ id: string }[]>(
              `insert into ${table} ("id", "account_id", "mode", "key", "fingerprint", "response", "created_at") values (?, ?, ?, ?, ?, null, ?)
               on conflict ("account_id", "mode", "key", "fingerprint") do update set "id" = excluded."id", "response" = null, "created_at" = excluded."created_at"
               where ${table}."created_at" < ? returning "id"`,
              [id, principal.accountId, principal.mode, key, fingerprint, now, new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS)],
            );
            if (claimed.length) {
              await em.execute(`savepoint ${SAVEPOINT}`, [], 'run');
              const pubsub = deferredPubSub(context.pubsub);
              context.pubsub = pubsub;
              run = { id, pubsub };
              return null;
            }
            await em.rollback();
          } catch (error) {
            if (em.isInTransaction()) await em.rollback().catch(() => undefined);
            throw error;
          }
          // Committed by an earlier request with this key and fetch: its answer, not a second run.
          const [kept] = await em.fork().execute<{ response: FormattedExecutionResult }[]>(
            `select "response" from ${table} where "account_id" = ? and "mode" = ? and "key" = ? and "fingerprint" = ?`,
            [principal.accountId, principal.mode, key, fingerprint],
          );
          if (!kept?.response) return null;
          requestContext.response.http.headers.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
          return { http: requestContext.response.http, body: { kind: 'single', singleResult: kept.response } };
        },

        async willSendResponse(requestContext) {
          if (!run) return;
          const { id, pubsub } = run;
          run = undefined;
          const context = requestContext.contextValue;
          const { em } = context;
          const body = requestContext.response.body;
          let result: FormattedExecutionResult = body.kind === 'single' ? body.singleResult : body.initialResult;
          try {
            if (couldNotRun(result)) {
              await em.rollback();
              pubsub.discard();
              if (reportsChanges(result)) requestContext.response.body = { kind: 'single', singleResult: { data: null, errors: result.errors } };
              return;
            }
            try {
              await em.flush();
              await em.execute(`update ${table} set "response" = ? where "id" = ?`, [JSON.stringify(result), id], 'run');
            } catch (error) {
              if ((error as { code?: string }).code !== IN_FAILED_TRANSACTION || !result.errors?.length) throw error;
              // A failed statement ended the mutation's writes: none of them can commit. Keep the
              // answer without them, and claim no change that is not there.
              await em.execute(`rollback to savepoint ${SAVEPOINT}`, [], 'run');
              em.clear();
              pubsub.discard();
              if (reportsChanges(result)) result = { data: null, errors: result.errors };
              await em.execute(`update ${table} set "response" = ? where "id" = ?`, [JSON.stringify(result), id], 'run');
              requestContext.response.body = { kind: 'single', singleResult: result };
            }
            faultPoint('subgraph.mutation.before-commit');
            await em.commit();
            faultPoint('subgraph.mutation.after-commit');
          } catch (error) {
            if (em.isInTransaction()) await em.rollback().catch(() => undefined);
            pubsub.discard();
            const requestId = context.requestId ?? 'unknown';
            options.logger.error({ err: error, requestId }, 'a keyed mutation could not be committed; nothing of it was kept');
            // Nothing committed: the client must not read success, and may retry with the same key.
            requestContext.response.body = {
              kind: 'single',
              singleResult: {
                data: null,
                errors: [{ message: 'The change could not be saved; retry with the same Idempotency-Key', extensions: { code: 'SERVICE_UNAVAILABLE', requestId } }],
              },
            };
            return;
          }
          pubsub.flush();
          sweep(context).catch((error: unknown) => options.logger.warn({ err: error }, 'could not sweep expired idempotent outcomes'));
        },
      };
    },
  };
}
