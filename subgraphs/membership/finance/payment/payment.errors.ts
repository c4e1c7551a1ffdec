import { DomainError } from '../../../../core/errors.js';

export class PaymentArgumentNotFoundError extends DomainError {
  constructor(id: string) {
    super('NOT_FOUND', `No payment with id "${id}"`, { param: 'paymentId', reason: 'payment_not_found' });
  }
}
