import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** The holder of API keys: a customer of the platform (e.g. "acme"). */
@Entity({ tableName: 'account' })
export class Account {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** Human-chosen, URL-safe name, unique across the platform. */
  @Property({ type: 'string', length: 64, unique: true })
  slug!: string;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
