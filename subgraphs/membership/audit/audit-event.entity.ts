import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { JSONObjectResolver } from 'graphql-scalars';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';

/**
 * One change, written in the transaction that made it: who (the API key), when, what, and the
 * record's relevant fields before and after. Rows are only ever inserted.
 */
@ObjectType({ description: 'A recorded change: state change, payment, refund, renewal.' })
@Entity({ tableName: 'audit_event' })
@Index({ name: 'audit_event_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
@Index({ name: 'audit_event_entity_index', properties: ['accountId', 'mode', 'entityId', 'createdAt', 'id'] })
export class AuditEvent {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String, { description: 'Id of the API key that made the change.' })
  @Property({ type: 'string', length: 100 })
  keyId!: string;

  @Field(() => String, { description: 'member, member_category, invoice, payment or refund.' })
  @Property({ type: 'string', length: 32 })
  entity!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  entityId!: string;

  @Field(() => String, { description: 'e.g. member.renewed, invoice.voided, payment.created.' })
  @Property({ type: 'string', length: 64 })
  action!: string;

  @Field(() => JSONObjectResolver, { nullable: true })
  @Property({ type: 'json', nullable: true })
  before?: Record<string, unknown> | null;

  @Field(() => JSONObjectResolver, { nullable: true })
  @Property({ type: 'json', nullable: true })
  after?: Record<string, unknown> | null;

  @Field(() => DateTimeResolver, { description: 'When the change was made.' })
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => Boolean)
  get livemode(): boolean {
    return this.mode === 'live';
  }
}
