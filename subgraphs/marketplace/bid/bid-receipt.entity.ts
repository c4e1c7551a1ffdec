import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';

/**
 * The receipt of one version of a bid: the canonical JSON of its content and the database time
 * it was written, and the SHA-256 of that text. Only ever inserted; an amendment appends one.
 */
@ObjectType({ description: 'A receipt of one bid version: SHA-256 over the canonical JSON of its content and time.' })
@Entity({ tableName: 'bid_receipt' })
@Index({ name: 'bid_receipt_bid_index', expression: 'create unique index "bid_receipt_bid_index" on "marketplace"."bid_receipt" ("bid_id", "version")' })
@Index({ name: 'bid_receipt_sha256_index', properties: ['sha256'] })
export class BidReceipt {
  [OptionalProps]?: 'id';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  bidId!: string;

  @Field(() => Int)
  @Property({ type: 'integer' })
  version!: number;

  @Field(() => String, { description: 'The exact text hashed: canonical JSON (sorted keys, no spaces) of the bid content and recordedAt.' })
  @Property({ type: 'text' })
  canonical!: string;

  @Field(() => String, { description: 'Hex SHA-256 of `canonical`.' })
  @Property({ type: 'string', length: 64 })
  sha256!: string;

  @Field(() => DateTimeResolver, { description: 'The database clock when the bid version was written, inside its transaction.' })
  @Property({ type: 'datetime' })
  recordedAt!: Date;
}
