import DataLoader from 'dataloader';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import type { Member } from './member.entity.js';
import { MemberService } from './member.service.js';

/**
 * Resolves Member references from other subgraphs. All references of one request are batched
 * into a single statement, scoped to the caller's account and mode like every other read.
 */
export const memberReference = {
  __resolveReference(reference: { id: string }, ctx: SubgraphContext): Promise<Member | null> {
    const loader = loaderFor(
      ctx,
      'member.byId',
      () => new DataLoader<string, Member | null>((ids) => new MemberService(ctx.em, ctx.principal).findMany(ids)),
    );
    return loader.load(reference.id);
  },
};
