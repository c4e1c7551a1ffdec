import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** A label changed in this account and mode: the worker trains its classifier again, once per burst of changes. */
@Entity({ tableName: 'document_training_request' })
export class DocumentTrainingRequest {
  @PrimaryKey({ type: 'uuid' })
  accountId!: string;

  @PrimaryKey({ type: 'string', length: 4 })
  mode!: string;

  @Property({ type: 'datetime' })
  requestedAt!: Date;
}
