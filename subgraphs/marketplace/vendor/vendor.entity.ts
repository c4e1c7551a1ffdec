import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Check, Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { VendorStatus } from './vendor-status.js';

/**
 * The supplier profile of an account in one mode (as SAP Ariba registers suppliers): one per
 * account and mode. Only approved vendors bid.
 */
@ObjectType({ description: 'A vendor: an account of the platform registered as a supplier.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'vendor' })
@Unique({ name: 'vendor_account_mode_unique', properties: ['accountId', 'mode'] })
@Index({ name: 'vendor_mode_created_index', properties: ['mode', 'createdAt', 'id'] })
@Check({ name: 'vendor_status_check', expression: "status in ('pending', 'approved', 'suspended')" })
export class Vendor {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'livemode' | 'status';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String)
  @Property({ type: 'string', length: 200 })
  name!: string;

  @Field(() => String, { description: 'ISO 3166-1 alpha-2 country code.' })
  @Property({ type: 'string', length: 2 })
  country!: string;

  @Field(() => String)
  @Property({ type: 'string', length: 64 })
  registrationNumber!: string;

  /** Shown to the vendor's own account only (the resolver hides it from others). */
  @Property({ type: 'string', length: 254 })
  contactEmail!: string;

  @Field(() => [String])
  @Property({ type: 'json' })
  categories!: string[];

  @Field(() => VendorStatus)
  @Property({ type: 'string', length: 16, default: 'pending' })
  status: VendorStatus = VendorStatus.PENDING;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  updatedAt: Date = new Date();

  @Field(() => Boolean)
  get livemode(): boolean {
    return this.mode === 'live';
  }
}
