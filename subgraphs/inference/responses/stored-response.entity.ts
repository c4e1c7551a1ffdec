import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * A Responses API answer kept for GET /v1/responses/{id}, `previous_response_id` and
 * `item_reference` (responses/response-store.ts): the Response object as it was answered, the
 * request's input items with their ids, and the scope that may see it. Read and written in raw
 * SQL by the store; the entity declares the table for the schema diff. Rows past `expires_at`
 * are invisible at once and deleted by the next retention sweep.
 */
@Entity({ tableName: 'stored_response' })
@Index({ name: 'stored_response_expires_index', properties: ['expiresAt'] })
// An item_reference names an item, not its response: the ids of every item a row holds, searchable.
@Index({ name: 'stored_response_item_ids_index', properties: ['itemIds'], type: 'gin' })
export class StoredResponse {
  @PrimaryKey({ type: 'string', length: 64 })
  id!: string;

  /** `account:<uuid>` on the keyed mounts, `keyless` on the proxy and the gateway. */
  @Property({ type: 'string', length: 64 })
  scope!: string;

  // json, not jsonb: kept as written (key order, and text holding \u0000, which jsonb refuses).
  /** The Response object, as POST answered it or as the stream's last event carried it. */
  @Property({ type: 'json', columnType: 'json' })
  response!: object;

  /** The request's input items, item references resolved, each with its id; null when they were too large to keep. */
  @Property({ type: 'json', columnType: 'json', nullable: true })
  inputItems?: object[] | null;

  @Property({ type: 'string', length: 64, nullable: true })
  previousResponseId?: string | null;

  @Property({ type: 'string[]' })
  itemIds!: string[];

  @Property({ type: 'datetime', length: 6 })
  createdAt!: Date;

  @Property({ type: 'datetime', length: 6 })
  expiresAt!: Date;
}
