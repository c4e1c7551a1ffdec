import type { AuthCheckerFn } from 'type-graphql';
import type { SubgraphContext } from './context.js';
import { DomainError } from '../../core/errors.js';
import type { KeyKind } from '../../core/principal.js';

/** The platform operators' kind: `@Authorized(ADMIN)` on a resolver or field keeps it theirs. */
export const ADMIN: KeyKind = 'admin';

/**
 * type-graphql's authorization for every subgraph: `@Authorized(...kinds)` names the key kinds a
 * field serves. The subgraph's kind gate (enforceKeyKinds) has already let the request in; this
 * narrows one field further. A refusal is our FORBIDDEN with a reason, not type-graphql's
 * generic "Access denied", so clients read it like every other refusal.
 */
export const authChecker: AuthCheckerFn<SubgraphContext, KeyKind> = ({ context, info }, kinds) => {
  if (kinds.length === 0 || kinds.includes(context.principal.kind)) return true;
  const only = kinds.length === 1 ? `an ${kinds[0]} key` : `a key of kind ${kinds.join(' or ')}`;
  throw new DomainError('FORBIDDEN', `Only ${only} may use ${info.parentType.name}.${info.fieldName}`, {
    reason: kinds.length === 1 ? `${kinds[0]}_only` : 'wrong_key_kind',
  });
};
