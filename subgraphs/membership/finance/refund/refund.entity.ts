import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../../shared/scalars.js';
import { Field, ID, Int, ObjectType } from '../../../shared/type-graphql.js';
import type { Mode } from '../../../../core/principal.js';

/** Money returned from a payment. */
@ObjectType({ description: 'A refund of (part of) a payment.' })
@Entity({ tableName: 'refund' })
@Index({ name: 'refund_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
@Index({ name: 'refund_payment_index', properties: ['paymentId'] })
export class Refund {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  paymentId!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  invoiceId!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  memberId!: string;

  @Property({ type: 'uuid', nullable: true })
  categoryId?: string | null;

  @Field(() => Int, { description: 'Minor units.' })
  @Property({ type: 'integer' })
  amount!: number;

  @Field(() => String)
  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 500, nullable: true })
  reason?: string | null;

  @Field(() => DateTimeResolver, { description: 'When the refund was made; reports count it then.' })
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => Boolean)
  get livemode(): boolean {
    return this.mode === 'live';
  }
}
