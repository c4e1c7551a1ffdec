import { DomainError } from '../../../core/errors.js';

export class BidNotValidError extends DomainError {
  constructor(status: string) {
    super('CONFLICT', `Only a valid bid can be awarded; this one is ${status}`, { reason: 'bid_not_valid' });
  }
}

export class NotBestBidError extends DomainError {
  constructor(bestId: string) {
    super('CONFLICT', `The award goes to the best valid bid of the lot, ${bestId}`, { reason: 'award_not_best_bid' });
    Object.assign(this.extensions, { bestBidId: bestId });
  }
}

export class QualityScoresError extends DomainError {
  constructor(message: string) {
    super('BAD_USER_INPUT', message, { param: 'qualityScores', reason: 'invalid_quality_scores' });
  }
}

export class LotAlreadyAwardedError extends DomainError {
  constructor(awardId: string) {
    super('CONFLICT', `The lot is already awarded (award ${awardId}); cancel that award first`, { reason: 'lot_already_awarded' });
  }
}

export class AwardsPendingError extends DomainError {
  constructor() {
    super('CONFLICT', 'Every award must be active (confirmed) before the tender completes', { reason: 'awards_pending' });
  }
}
