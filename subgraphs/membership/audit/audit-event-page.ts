import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { AuditEvent } from './audit-event.entity.js';

/** One page of audit events, newest first. */
@ObjectType()
export class AuditEventPage extends PageOf(AuditEvent) {}
