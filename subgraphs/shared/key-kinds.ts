import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import type { SubgraphContext } from './context.js';
import { DomainError } from '../../core/errors.js';
import type { KeyKind } from '../../core/principal.js';

/**
 * Root fields the gateway itself calls. `_entities` only follows a reference that the query
 * reached through a root field, and that root field's own subgraph checked the key's kind
 * already; `_service` is the SDL. Both are open to any authenticated principal, so that a
 * cross-subgraph reference keeps resolving for every kind its root subgraph serves.
 */
const FEDERATION_FIELDS = new Set(['_entities', '_service']);

/** A key of a kind this subgraph does not serve: `extensions.code` FORBIDDEN, reason `wrong_key_kind`. */
export class WrongKeyKindError extends DomainError {
  constructor(kind: string | undefined, subgraph: string, serves: readonly KeyKind[]) {
    super(
      'FORBIDDEN',
      `The ${subgraph} API serves ${serves.join(', ')} keys only; ${kind ? `a${/^[aeiou]/.test(kind) ? 'n' : ''} ${kind} key has` : 'a request without a key has'} no access to it`,
      { reason: 'wrong_key_kind' },
    );
  }
}

/**
 * Makes every root Query, Mutation and Subscription field of `schema` refuse a principal whose
 * key kind is not in `serves`, whatever the edge let through (defence in depth). Subscriptions
 * are checked once, when they start: an operation's principal cannot change while it runs.
 * `byField` names root fields (`Mutation.qualifyVendor`) served to other kinds than the rest.
 * Changes `schema` in place and returns it.
 */
export function enforceKeyKinds(
  schema: GraphQLSchema,
  subgraph: string,
  serves: readonly KeyKind[],
  byField: Readonly<Record<string, readonly KeyKind[]>> = {},
): GraphQLSchema {
  const check = (context: unknown, kinds: readonly KeyKind[]): void => {
    const kind = (context as Partial<SubgraphContext> | undefined)?.principal?.kind;
    if (!kind || !kinds.includes(kind)) throw new WrongKeyKindError(kind, subgraph, kinds);
  };
  const guarded = (inner: GraphQLFieldResolver<unknown, unknown>, kinds: readonly KeyKind[]): GraphQLFieldResolver<unknown, unknown> =>
    (source, args, context, info) => {
      check(context, kinds);
      return inner(source, args, context, info);
    };
  for (const root of [schema.getQueryType(), schema.getMutationType()]) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      if (FEDERATION_FIELDS.has(field.name)) continue;
      field.resolve = guarded(field.resolve ?? defaultFieldResolver, byField[`${root!.name}.${field.name}`] ?? serves);
    }
  }
  for (const field of Object.values(schema.getSubscriptionType()?.getFields() ?? {})) {
    field.subscribe = guarded(field.subscribe ?? defaultFieldResolver, byField[`Subscription.${field.name}`] ?? serves);
  }
  return schema;
}
