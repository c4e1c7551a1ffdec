import type { MikroORM } from '@mikro-orm/postgresql';
import type { Tracer } from '@opentelemetry/api';
import { inSpan, SpanKind } from './tracing.js';

interface QueryContext {
  query?: unknown;
}

/**
 * A CLIENT span per SQL statement of `orm`, child of whatever span is active (the request's).
 * The statement is recorded with its placeholders, never its parameters: those are members'
 * names, e-mail addresses and documents.
 */
export function traceSql(orm: MikroORM, tracer: Tracer): void {
  const connection = orm.em.getConnection() as unknown as {
    executeQuery<T>(query: string, cb: () => Promise<T>, context?: QueryContext): Promise<T>;
  };
  const execute = connection.executeQuery.bind(connection);
  connection.executeQuery = (query, cb, context) => {
    const statement = typeof context?.query === 'string' ? context.query : '';
    const verb = /^\s*(\w+)/.exec(statement)?.[1]?.toUpperCase() ?? 'SQL';
    return inSpan(
      tracer,
      `sql ${verb}`,
      { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.query.text': statement.slice(0, 2000) } },
      () => execute(query, cb, context),
    );
  };
}
