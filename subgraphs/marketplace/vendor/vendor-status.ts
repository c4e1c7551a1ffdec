import { DomainError } from '../../../core/errors.js';
import { registerEnumType } from '../../shared/type-graphql.js';

/** A vendor's qualification, decided by the platform's operator (an admin key). */
export enum VendorStatus {
  PENDING = 'pending',
  APPROVED = 'approved',
  SUSPENDED = 'suspended',
}

registerEnumType(VendorStatus, {
  name: 'VendorStatus',
  valuesConfig: {
    PENDING: { description: 'Registered; awaiting qualification. Cannot bid.' },
    APPROVED: { description: 'Qualified: may bid.' },
    SUSPENDED: { description: 'Suspended by the operator: cannot bid until approved again.' },
  },
});

/** The one qualification rule: pending → approved → suspended → approved. */
const VENDOR_TRANSITIONS: Readonly<Record<VendorStatus, readonly VendorStatus[]>> = {
  [VendorStatus.PENDING]: [VendorStatus.APPROVED],
  [VendorStatus.APPROVED]: [VendorStatus.SUSPENDED],
  [VendorStatus.SUSPENDED]: [VendorStatus.APPROVED],
};

export class IllegalVendorTransitionError extends DomainError {
  constructor(from: VendorStatus, to: VendorStatus) {
    super('CONFLICT', `A vendor cannot go from ${from} to ${to}`, { reason: 'illegal_vendor_transition' });
    Object.assign(this.extensions, { from, to });
  }
}

export function assertVendorTransition(from: VendorStatus, to: VendorStatus): void {
  if (!VENDOR_TRANSITIONS[from].includes(to)) throw new IllegalVendorTransitionError(from, to);
}
