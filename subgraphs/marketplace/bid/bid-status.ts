import { registerEnumType } from '../../shared/type-graphql.js';

/** A bid's status (Prozorro's names where they exist). */
export enum BidStatus {
  ACTIVE = 'active',
  INVALID = 'invalid',
  WITHDRAWN = 'withdrawn',
  AWARDED = 'awarded',
  UNSUCCESSFUL = 'unsuccessful',
}

registerEnumType(BidStatus, {
  name: 'BidStatus',
  valuesConfig: {
    ACTIVE: { description: 'Placed (or confirmed) under the current terms; takes part in the evaluation.' },
    INVALID: { description: "The tender's terms changed after it was placed: the vendor must confirm it before the deadline, or it is excluded." },
    WITHDRAWN: { description: 'Withdrawn by the vendor within the tender period.' },
    AWARDED: { description: 'Holds the award of its lot (active or pending).' },
    UNSUCCESSFUL: { description: 'Lost the award, or its award was cancelled.' },
  },
});

/** Statuses of a bid that the evaluation considers. */
export const VALID_BID_STATUSES: readonly BidStatus[] = [BidStatus.ACTIVE];
