import type { Attendee } from './attendee.entity.js';

/** A registration as `registration.*` webhook deliveries carry it: the attendee's GraphQL field names. */
export function registrationWebhookData(attendee: Attendee): Record<string, unknown> {
  return {
    id: attendee.id,
    eventId: attendee.eventId,
    memberId: attendee.memberId,
    guest: attendee.guest,
    name: attendee.name,
    email: attendee.email,
    status: attendee.status.toUpperCase(),
    invoiceId: attendee.invoiceId ?? null,
    paymentDueAt: attendee.paymentDueAt?.toISOString() ?? null,
    promotedAt: attendee.promotedAt?.toISOString() ?? null,
    createdAt: attendee.createdAt.toISOString(),
  };
}
