import type { MemberStatus } from './member-status.js';

/** A member as `member.*` webhook deliveries carry it: the GraphQL field names. */
export function memberWebhookData(member: {
  id: string;
  name: string;
  email: string;
  categoryId?: string | null;
  status: MemberStatus;
  joinedOn?: string;
  periodStart: string;
  periodEnd: string | null;
  graceEndsOn: string | null;
}): Record<string, unknown> {
  const { id, name, email, categoryId, status, periodStart, periodEnd, graceEndsOn } = member;
  return { id, name, email, categoryId: categoryId ?? null, status: status.toUpperCase(), periodStart, periodEnd, graceEndsOn };
}
