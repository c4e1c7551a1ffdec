import { DomainError } from '../../../core/errors.js';
import { TenderStatus } from './tender-status.js';

/**
 * Every move a tender may make, and what makes it. The service consults this table before each
 * change of status, so a rule lives here once; anything not listed is refused.
 */
export const TENDER_TRANSITIONS: Readonly<Record<TenderStatus, Partial<Record<TenderStatus, string>>>> = {
  [TenderStatus.DRAFT]: {
    [TenderStatus.ACTIVE]: 'the buyer publishes it (publishTender)',
    [TenderStatus.CANCELLED]: 'the buyer cancels it',
  },
  [TenderStatus.ACTIVE]: {
    [TenderStatus.EVALUATION]: 'the deadline passes with at least one valid bid (derived by the database clock)',
    [TenderStatus.UNSUCCESSFUL]: 'the deadline passes with no valid bid',
    [TenderStatus.CANCELLED]: 'the buyer cancels it with a reason',
  },
  [TenderStatus.EVALUATION]: {
    [TenderStatus.AWARDED]: 'the buyer awards every lot that has valid bids',
    [TenderStatus.UNSUCCESSFUL]: 'every valid bid ends unsuccessful',
    [TenderStatus.CANCELLED]: 'the buyer cancels it with a reason',
  },
  [TenderStatus.AWARDED]: {
    [TenderStatus.COMPLETE]: 'the buyer confirms the contracts (completeTender); every award active',
    [TenderStatus.UNSUCCESSFUL]: 'an award is cancelled and no valid bid is left',
    [TenderStatus.CANCELLED]: 'the buyer cancels it with a reason',
  },
  [TenderStatus.COMPLETE]: {},
  [TenderStatus.CANCELLED]: {},
  [TenderStatus.UNSUCCESSFUL]: {},
};

/** An illegal move: 409 `illegal_tender_transition`, naming from and to. */
export class IllegalTenderTransitionError extends DomainError {
  constructor(from: TenderStatus, to: TenderStatus) {
    super('CONFLICT', `A tender cannot go from ${from} to ${to}`, { reason: 'illegal_tender_transition' });
    Object.assign(this.extensions, { from, to });
  }
}

export function canTransition(from: TenderStatus, to: TenderStatus): boolean {
  return TENDER_TRANSITIONS[from][to] !== undefined;
}

/** Throws IllegalTenderTransitionError unless the table allows `from` → `to`. */
export function assertTransition(from: TenderStatus, to: TenderStatus): void {
  if (!canTransition(from, to)) throw new IllegalTenderTransitionError(from, to);
}
