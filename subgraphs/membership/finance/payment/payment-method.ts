import { registerEnumType } from '../../../shared/type-graphql.js';

/** How a recorded payment was received (no processor is involved: payments are recorded). */
export enum PaymentMethod {
  CARD = 'card',
  BANK_TRANSFER = 'bank_transfer',
  DIRECT_DEBIT = 'direct_debit',
  CASH = 'cash',
  CHECK = 'check',
  OTHER = 'other',
}

registerEnumType(PaymentMethod, { name: 'PaymentMethod' });
