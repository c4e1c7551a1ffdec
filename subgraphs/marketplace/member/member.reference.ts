import type { MemberType } from './member.type.js';

/** The marketplace holds no member rows: a reference is the member, by id. */
export const memberReference = {
  __resolveReference(reference: { id: string }): MemberType {
    return { id: reference.id };
  },
};
