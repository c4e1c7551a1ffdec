import type { Award } from '../award/award.entity.js';
import type { Tender } from './tender.entity.js';

/** A tender as `tender.*` deliveries carry it (to its buyer): the GraphQL field names, enum values upper case. */
export function tenderWebhookData(tender: Tender, bidCount?: number): Record<string, unknown> {
  return {
    id: tender.id,
    title: tender.title,
    status: tender.status.toUpperCase(),
    procurementMethod: tender.procurementMethod.toUpperCase(),
    value: tender.value,
    tenderPeriod: { startDate: tender.tenderPeriodStart.toISOString(), endDate: tender.tenderPeriodEnd.toISOString() },
    ...(bidCount === undefined ? {} : { validBidCount: bidCount }),
  };
}

/** An award as `tender.awarded` carries it. */
export function awardWebhookData(award: Award): Record<string, unknown> {
  return { id: award.id, bidId: award.bidId, vendorId: award.vendorId, lotId: award.lotId ?? null, status: award.status.toUpperCase(), value: award.value };
}
