import type { MikroORM } from '@mikro-orm/postgresql';
import { IdentityService } from '../../platform/identity/identity.service.js';
import { createSubgraph, type Subgraph, type SubgraphOptions, type SubgraphParts } from '../shared/subgraph.js';
import { ApiKeyResolver } from './api-key/api-key.resolver.js';
import type { MembershipContext } from './membership.context.js';
import { membershipOrmOptions } from './mikro-orm.config.js';
import { memberReference } from './member/member.reference.js';
import { MemberResolver } from './member/member.resolver.js';

export const membershipParts: SubgraphParts = {
  name: 'membership',
  orm: membershipOrmOptions,
  resolvers: [MemberResolver, ApiKeyResolver],
  references: { Member: memberReference },
  kinds: ['live', 'test'],
};

export interface MembershipSubgraphOptions extends SubgraphOptions {
  /** The edge's key store, for Settings, API Keys. */
  identityOrm: MikroORM;
}

/** Builds the membership subgraph (members, API-key settings) and migrates its schema. */
export function createMembershipSubgraph(options: MembershipSubgraphOptions): Promise<Subgraph<MembershipContext>> {
  return createSubgraph<MembershipContext>(membershipParts, options, (base) => ({
    ...base,
    identity: new IdentityService(options.identityOrm.em.fork()),
  }));
}
