import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import type { Mode } from '../../../core/principal.js';

/**
 * Per account and mode: whether the default categories were made (so deleting them all does not
 * bring them back), and the version that every category or rule change bumps, which tells a stored
 * classification that it is stale.
 */
@Entity({ tableName: 'document_category_state' })
export class DocumentCategoryState {
  @PrimaryKey({ type: 'uuid' })
  accountId!: string;

  @PrimaryKey({ type: 'string', length: 4 })
  mode!: Mode;

  @Property({ type: 'integer' })
  version!: number;

  @Property({ type: 'datetime' })
  seededAt!: Date;
}
