import { DomainError } from '../../../core/errors.js';

export class VendorExistsError extends DomainError {
  constructor(existingId: string) {
    super('CONFLICT', `This account is already registered as vendor ${existingId}`, { reason: 'vendor_exists' });
    Object.assign(this.extensions, { existingId });
  }
}

export class VendorNotRegisteredError extends DomainError {
  constructor() {
    super('FORBIDDEN', 'Register this account as a vendor (registerVendor) before bidding', { reason: 'vendor_not_registered' });
  }
}

export class VendorNotApprovedError extends DomainError {
  constructor(status: string) {
    super('FORBIDDEN', `Only approved vendors bid; this vendor is ${status}`, { reason: 'vendor_not_approved' });
  }
}
