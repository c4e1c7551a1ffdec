import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import type { KeyKind } from '../core/principal.js';
import { Account } from './account.entity.js';

/** An API key. Only the SHA-256 of the secret is kept: the secret itself is shown once. */
@Entity({
  tableName: 'api_key',
  // Tells every key cache of a change (Migration20261123005000KeyChanges, key-cache.ts).
  triggers: [
    {
      name: 'api_key_changed',
      timing: 'after',
      events: ['update', 'delete'],
      forEach: 'row',
      expression: 'create trigger "api_key_changed" after update or delete on "identity"."api_key" for each row execute function "identity"."api_key_changed"();',
    },
  ],
})
@Index({ properties: ['account', 'createdAt'] })
export class ApiKey {
  @PrimaryKey({ type: 'string', length: 40 })
  id!: string;

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  @Property({ type: 'string', length: 16 })
  kind!: KeyKind;

  @Property({ type: 'string', length: 120, nullable: true })
  name?: string | null;

  /** The first characters of the secret, enough for a person to recognise the key. */
  @Property({ type: 'string', length: 24 })
  prefix!: string;

  @Property({ type: 'string', length: 64, unique: true })
  secretHash!: string;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', nullable: true })
  disabledAt?: Date | null;

  @Property({ type: 'datetime', nullable: true })
  expiresAt?: Date | null;

  /** When the key last authenticated a request, to the minute (KeyUseRecorder); no change notice. */
  @Property({ type: 'datetime', nullable: true })
  lastUsedAt?: Date | null;

  /** Traceroute keys' own limits; null means the default of the key's kind. */
  @Property({ type: 'integer', nullable: true })
  hourlyLimit?: number | null;

  @Property({ type: 'integer', nullable: true })
  dailyLimit?: number | null;

  /**
   * Text and image keys' inference plan (a plan id of the inference configuration); null means
   * the configuration's default plan, read when a request is served. Always null for other kinds.
   */
  @Property({ type: 'string', length: 64, nullable: true })
  plan?: string | null;
}
