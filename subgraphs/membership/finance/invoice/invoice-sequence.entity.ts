import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import type { Mode } from '../../../../core/principal.js';

/**
 * The last invoice number given per account and mode. Numbers are taken with one upsert in the
 * finalising transaction, so they are gapless and never handed out twice.
 */
@Entity({ tableName: 'invoice_sequence' })
export class InvoiceSequence {
  @PrimaryKey({ type: 'uuid' })
  accountId!: string;

  @PrimaryKey({ type: 'string', length: 4 })
  mode!: Mode;

  @Property({ type: 'integer' })
  lastNumber!: number;
}
