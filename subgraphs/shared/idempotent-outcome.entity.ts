import { Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';

/**
 * The answer a keyed mutation gave, stored in the transaction of its writes (one table in each
 * subgraph's schema): if the writes committed, so did this row, and a retry with the same key
 * replays it instead of running again. Written with plain SQL by idempotent-mutations.plugin.ts;
 * declared so that the ORM's schema comparison knows the table.
 */
@Entity({ tableName: 'idempotent_outcome' })
// The fetch's fingerprint is part of the key: one client request may send several mutation fetches to one subgraph.
@Unique({ properties: ['accountId', 'mode', 'key', 'fingerprint'] })
// The retention sweep takes the oldest rows first.
@Index({ properties: ['createdAt'] })
export class IdempotentOutcome {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @Property({ type: 'string', length: 64 })
  accountId!: string;

  @Property({ type: 'string', length: 8 })
  mode!: string;

  @Property({ type: 'string', length: 255 })
  key!: string;

  /** Hex SHA-256 of the subgraph fetch: operation name, document and variables. */
  @Property({ type: 'string', length: 64 })
  fingerprint!: string;

  /** The GraphQL response as the gateway received it; null only inside the transaction that writes it. */
  @Property({ type: 'json', nullable: true })
  response?: unknown;

  @Property({ type: 'datetime' })
  createdAt!: Date;
}
