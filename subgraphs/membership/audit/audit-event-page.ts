import { Field, ObjectType } from '../../shared/type-graphql.js';
import { AuditEvent } from './audit-event.entity.js';

/** One page of audit events, newest first. */
@ObjectType()
export class AuditEventPage {
  @Field(() => [AuditEvent])
  data!: AuditEvent[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
