import { defaultFieldResolver, type GraphQLSchema } from 'graphql';
import type { Principal } from '../../core/principal.js';
import type { SubgraphContext } from './context.js';
import { InsufficientRoleError } from './insufficient-role.error.js';
import { Extensions } from './type-graphql.js';

export type DashboardRole = NonNullable<Principal['user']>['role'];

/** Dashboard roles, from fewest rights to most; a role not listed has none. */
const ROLE_ORDER: readonly DashboardRole[] = ['viewer', 'developer', 'owner'];

/**
 * What a mutation needs from a dashboard user unless it declares otherwise: a developer may do
 * whatever a key may (a developer can issue such a key anyway); a viewer changes nothing.
 */
export const DEFAULT_MUTATION_ROLE: DashboardRole = 'developer';

const MINIMUM_ROLE = 'minimumRole';

/** Declares on a `@Mutation` that a dashboard user needs at least `role` for it (keys carry no role). */
export function MinimumRole(role: DashboardRole): MethodDecorator {
  return Extensions({ [MINIMUM_ROLE]: role });
}

/**
 * Makes every root Mutation field of `schema` refuse a dashboard user (a session's principal)
 * whose role is below the field's minimum: InsufficientRoleError, raised before type-graphql
 * validates the arguments or the resolver touches the database. A principal without a user
 * (an API key) is not checked. Changes `schema` in place and returns it.
 */
export function enforceMutationRoles(schema: GraphQLSchema): GraphQLSchema {
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) {
    const minimum = (field.extensions[MINIMUM_ROLE] as DashboardRole | undefined) ?? DEFAULT_MUTATION_ROLE;
    const inner = field.resolve ?? defaultFieldResolver;
    const name = `${schema.getMutationType()!.name}.${field.name}`;
    field.resolve = (source, args, context, info) => {
      const user = (context as Partial<SubgraphContext> | undefined)?.principal?.user;
      if (user && ROLE_ORDER.indexOf(user.role) < ROLE_ORDER.indexOf(minimum)) {
        throw new InsufficientRoleError(`${name} needs the ${minimum} role or above; this user is a ${user.role}`);
      }
      return inner(source, args, context, info);
    };
  }
  return schema;
}
