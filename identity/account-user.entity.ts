import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Account } from './account.entity.js';

/** What a person may do in the dashboard: owners manage users, developers manage keys, viewers look. */
export const USER_ROLES = ['owner', 'developer', 'viewer'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** A person who signs in to the dashboard for one account (keys are for programs, users for people). */
@Entity({ tableName: 'account_user' })
export class AccountUser {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  /** Stored lowercased, so that the unique constraint holds without regard to case. */
  @Property({ type: 'string', length: 254, unique: true })
  email!: string;

  @Property({ type: 'string', length: 120 })
  name!: string;

  /** argon2id, in its PHC string form (salt and parameters included). */
  @Property({ type: 'string', length: 255 })
  passwordHash!: string;

  @Property({ type: 'string', length: 16 })
  role!: UserRole;

  /** The platform's operators: they may act with the admin kind (traceroute admin area, inference). */
  @Property({ type: 'boolean', default: false })
  platformAdmin: boolean = false;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
