import { OptionalProps } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import type { Mode } from '../../../core/principal.js';

/** The naive Bayes model trained on one account's (and mode's) labelled documents. */
@Entity({ tableName: 'document_classifier_model' })
export class DocumentClassifierModel {
  [OptionalProps]?: 'trainedAt';

  @PrimaryKey({ type: 'uuid' })
  accountId!: string;

  @PrimaryKey({ type: 'string', length: 4 })
  mode!: Mode;

  /** wink-naive-bayes-text-classifier's exportJSON(), as it gave it. */
  @Property({ type: 'text' })
  model!: string;

  /** The category names the model learnt. */
  @Property({ type: 'json' })
  labels!: string[];

  /** Share of held-out documents classified right; null when too few were held out to say. */
  @Property({ type: 'float', nullable: true })
  accuracy!: number | null;

  @Property({ type: 'integer' })
  trainedOn!: number;

  @Property({ type: 'integer' })
  heldOut!: number;

  @Property({ type: 'datetime' })
  trainedAt: Date = new Date();
}
