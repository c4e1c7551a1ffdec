import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { AccountUser } from './account-user.entity.js';

/**
 * A signed-in browser. The cookie carries a random token; only its SHA-256 is the row's id, so
 * a copy of the table cannot be replayed as cookies.
 */
@Entity({ tableName: 'dashboard_session' })
@Index({ properties: ['user'] })
// The sweep of ended sessions takes them by absolute expiry.
@Index({ properties: ['expiresAt'] })
export class DashboardSession {
  @PrimaryKey({ type: 'string', length: 64 })
  id!: string;

  @ManyToOne(() => AccountUser, { deleteRule: 'cascade' })
  user!: AccountUser;

  /** Sent back by the dashboard in x-csrf-token on every state change. */
  @Property({ type: 'string', length: 64 })
  csrfToken!: string;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  /** The idle expiry counts from here. */
  @Property({ type: 'datetime' })
  lastSeenAt: Date = new Date();

  /** The absolute end, whatever the activity. */
  @Property({ type: 'datetime' })
  expiresAt!: Date;
}
