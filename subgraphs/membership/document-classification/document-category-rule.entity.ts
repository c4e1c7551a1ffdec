import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, Float, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { DocumentCategory } from './document-category.entity.js';
import { DocumentRuleKind } from './document-rule-kind.js';

@ObjectType({ description: "A matching rule of a document category: a document whose text matches is filed under the category with confidence 1." })
@Entity({ tableName: 'document_category_rule' })
// Rules are read by category (populate) and deleted with it: the foreign key is indexed.
@Index({ name: 'document_category_rule_category_id_index', properties: ['category'] })
export class DocumentCategoryRule {
  [OptionalProps]?: 'id' | 'caseSensitive' | 'threshold';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @ManyToOne(() => DocumentCategory, { deleteRule: 'cascade' })
  category!: DocumentCategory;

  /** The rule's place in its category's list. */
  @Property({ type: 'smallint' })
  position!: number;

  @Field(() => DocumentRuleKind)
  @Property({ type: 'string', length: 5 })
  kind!: DocumentRuleKind;

  @Field(() => String)
  @Property({ type: 'string', length: 500 })
  pattern!: string;

  @Field(() => Boolean, { description: 'Matching ignores case unless this is true.' })
  @Property({ type: 'boolean' })
  caseSensitive: boolean = false;

  @Field(() => Float, { nullable: true, description: 'FUZZY only: the least similarity (0-1) that matches; 0.8 when not given.' })
  @Property({ type: 'float', nullable: true })
  threshold: number | null = null;
}
