import type { MatchingJobType } from './matching-job.type.js';

/** Membership holds no postings: a reference is the posting's id plus the fields it @requires. */
export const matchingJobReference = {
  __resolveReference(reference: MatchingJobType): MatchingJobType {
    return reference;
  },
};
