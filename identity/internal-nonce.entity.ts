import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * A nonce of a signed internal call (core/key-store.ts) the edge has acted on. Its primary key is
 * the claim: a second call with the same nonce finds it taken. Kept a little longer than a
 * signature is accepted, then swept (identity/internal-nonces.ts).
 */
@Entity({ tableName: 'internal_nonce' })
// The sweep takes the oldest rows first.
@Index({ properties: ['seenAt'] })
export class InternalNonce {
  @PrimaryKey({ type: 'string', length: 64 })
  nonce!: string;

  @Property({ type: 'datetime' })
  seenAt!: Date;
}
