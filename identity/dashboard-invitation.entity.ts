import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Account } from './account.entity.js';
import { AccountUser, type UserRole } from './account-user.entity.js';

/** An owner's invitation of a person to the account; the link's token is shown once, only its hash kept. */
@Entity({ tableName: 'dashboard_invitation' })
export class DashboardInvitation {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  /** Lowercased like AccountUser.email. */
  @Property({ type: 'string', length: 254 })
  email!: string;

  @Property({ type: 'string', length: 16 })
  role!: UserRole;

  @Property({ type: 'string', length: 64, unique: true })
  tokenHash!: string;

  @ManyToOne(() => AccountUser, { nullable: true, deleteRule: 'set null' })
  inviter?: AccountUser | null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime' })
  expiresAt!: Date;

  @Property({ type: 'datetime', nullable: true })
  acceptedAt?: Date | null;
}
