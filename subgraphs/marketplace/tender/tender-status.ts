import { registerEnumType } from '../../shared/type-graphql.js';

/** A tender's status, as OCDS and Prozorro name them. */
export enum TenderStatus {
  DRAFT = 'draft',
  ACTIVE = 'active',
  EVALUATION = 'evaluation',
  AWARDED = 'awarded',
  COMPLETE = 'complete',
  CANCELLED = 'cancelled',
  UNSUCCESSFUL = 'unsuccessful',
}

registerEnumType(TenderStatus, {
  name: 'TenderStatus',
  valuesConfig: {
    DRAFT: { description: 'Being prepared by the buyer; seen by the buyer only.' },
    ACTIVE: { description: 'Published and open for bids until tenderPeriod.endDate.' },
    EVALUATION: { description: 'Past the deadline with valid bids; the buyer evaluates and awards.' },
    AWARDED: { description: 'An award is made (active or pending) for every lot with valid bids.' },
    COMPLETE: { description: 'The contract is signed; final.' },
    CANCELLED: { description: 'Cancelled by the buyer; final.' },
    UNSUCCESSFUL: { description: 'No valid bid at the deadline, or every award cancelled with none left; final.' },
  },
});

export enum ProcurementMethod {
  OPEN = 'open',
  SELECTIVE = 'selective',
}

registerEnumType(ProcurementMethod, {
  name: 'ProcurementMethod',
  valuesConfig: {
    OPEN: { description: 'Every approved vendor may bid.' },
    SELECTIVE: { description: 'Only the invited vendors may bid.' },
  },
});

export enum AwardCriteria {
  PRICE_ONLY = 'priceOnly',
  RATED_CRITERIA = 'ratedCriteria',
}

registerEnumType(AwardCriteria, {
  name: 'AwardCriteria',
  valuesConfig: {
    PRICE_ONLY: { description: 'The lowest valid price wins.' },
    RATED_CRITERIA: { description: 'Weighted price and quality: lowest/price × priceWeight + quality × qualityWeight.' },
  },
});
