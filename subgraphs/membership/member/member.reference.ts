import { batchedReference } from '../../shared/reference.js';
import type { Member } from './member.entity.js';
import { MemberService } from './member.service.js';

/** Member references from other subgraphs, scoped to the caller's account and mode like every read. */
export const memberReference = batchedReference<Member>('member.byId', (ctx, ids) =>
  new MemberService(ctx.em, ctx.principal).findMany(ids),
);
