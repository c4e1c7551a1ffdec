import type { MatchingMemberType } from './matching-member.type.js';

/** The marketplace holds no members: a reference is the id plus the profile fields it @requires. */
export const matchingMemberReference = {
  __resolveReference(reference: MatchingMemberType): MatchingMemberType {
    return reference;
  },
};
