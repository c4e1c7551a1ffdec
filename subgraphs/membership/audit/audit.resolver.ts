import { Args, Ctx, Query, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { AuditEvent } from './audit-event.entity.js';
import { AuditEventPage } from './audit-event-page.js';
import { AuditEventsArgs } from './audit.inputs.js';
import { AuditService } from './audit.service.js';

@Resolver(() => AuditEvent)
export class AuditResolver {
  @Query(() => AuditEventPage, { description: 'The audit trail, newest first; filter by entity and entityId.' })
  auditEvents(@Args(() => AuditEventsArgs) args: AuditEventsArgs, @Ctx() ctx: SubgraphContext): Promise<AuditEventPage> {
    return new AuditService(ctx.em, ctx.principal).list(args);
  }
}
