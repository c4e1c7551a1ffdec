import { registerEnumType } from '../../shared/type-graphql.js';

/** Orders of the member list; each is a keyset on (column, id). */
export enum MemberSort {
  CREATED_AT_DESC = 'created_at_desc',
  CREATED_AT_ASC = 'created_at_asc',
  NAME_ASC = 'name_asc',
  NAME_DESC = 'name_desc',
  JOINED_ON_ASC = 'joined_on_asc',
  JOINED_ON_DESC = 'joined_on_desc',
  PERIOD_END_ASC = 'period_end_asc',
  PERIOD_END_DESC = 'period_end_desc',
}

registerEnumType(MemberSort, {
  name: 'MemberSort',
  description: 'Member list order. PERIOD_END puts lifetime members (no end) last ascending, first descending.',
});

export const SORT_KEYS: Record<MemberSort, { field: 'createdAt' | 'name' | 'joinedOn' | 'periodEnd'; direction: 'asc' | 'desc' }> = {
  [MemberSort.CREATED_AT_DESC]: { field: 'createdAt', direction: 'desc' },
  [MemberSort.CREATED_AT_ASC]: { field: 'createdAt', direction: 'asc' },
  [MemberSort.NAME_ASC]: { field: 'name', direction: 'asc' },
  [MemberSort.NAME_DESC]: { field: 'name', direction: 'desc' },
  [MemberSort.JOINED_ON_ASC]: { field: 'joinedOn', direction: 'asc' },
  [MemberSort.JOINED_ON_DESC]: { field: 'joinedOn', direction: 'desc' },
  [MemberSort.PERIOD_END_ASC]: { field: 'periodEnd', direction: 'asc' },
  [MemberSort.PERIOD_END_DESC]: { field: 'periodEnd', direction: 'desc' },
};
