import { randomUUID } from 'node:crypto';
import { Collection, OptionalProps } from '@mikro-orm/core';
import { Entity, Index, OneToMany, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { DocumentCategoryRule } from './document-category-rule.entity.js';

/**
 * A category documents are filed under, per account and mode, with the rules that assign it.
 * Names are unique regardless of case (`normalizedName`), since the classifier and a user's
 * correction refer to categories by name.
 */
@ObjectType({ description: 'A document category of the account, with the rules that assign it.' })
@Entity({ tableName: 'document_category' })
@Unique({ name: 'document_category_scope_name_unique', properties: ['accountId', 'mode', 'normalizedName'] })
@Index({ name: 'document_category_scope_index', properties: ['accountId', 'mode', 'createdAt'] })
export class DocumentCategory {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'livemode';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String)
  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'string', length: 100 })
  normalizedName!: string;

  @OneToMany(() => DocumentCategoryRule, (rule) => rule.category, { orphanRemoval: true, orderBy: { position: 'asc' } })
  rules = new Collection<DocumentCategoryRule>(this);

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

/** Category names compare without case and with single spaces. */
export function normalizeCategoryName(name: string): string {
  return name.trim().replace(/\s+/g, ' ').toLowerCase();
}
