import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { Award, AwardStatus } from '../award/award.entity.js';
import { AwardService } from '../award/award.service.js';
import { BidStatus } from '../bid/bid-status.js';
import { Bid } from '../bid/bid.entity.js';
import { Vendor } from '../vendor/vendor.entity.js';
import { dbNow } from './tender-clock.js';
import { AwardCriteria, ProcurementMethod, TenderStatus } from './tender-status.js';
import type { Tender } from './tender.entity.js';
import type { OcdsSettings } from './ocds-settings.js';

/** OCDS 1.1, the version a 1.1.5 package declares (major.minor). */
const OCDS_VERSION = '1.1';
/** Lots are an extension of OCDS 1.1, declared by every package that has them. */
const LOTS_EXTENSION = 'https://raw.githubusercontent.com/open-contracting-extensions/ocds_lots_extension/v1.1.5/extension.json';

/** The tender's status in OCDS's closed tenderStatus codelist. */
const TENDER_STATUS: Record<TenderStatus, string> = {
  [TenderStatus.DRAFT]: 'planning',
  [TenderStatus.ACTIVE]: 'active',
  [TenderStatus.EVALUATION]: 'active',
  [TenderStatus.AWARDED]: 'complete',
  [TenderStatus.COMPLETE]: 'complete',
  [TenderStatus.CANCELLED]: 'cancelled',
  [TenderStatus.UNSUCCESSFUL]: 'unsuccessful',
};

/** What the release tells, from the closed releaseTag codelist. */
function tagsOf(tender: Tender): string[] {
  switch (tender.status) {
    case TenderStatus.DRAFT:
      return ['planning'];
    case TenderStatus.ACTIVE:
    case TenderStatus.EVALUATION:
      return [tender.termsVersion > 1 ? 'tenderAmendment' : 'tender'];
    case TenderStatus.CANCELLED:
      return ['tenderCancellation'];
    case TenderStatus.UNSUCCESSFUL:
      return ['tenderUpdate'];
    case TenderStatus.AWARDED:
      return ['award'];
    case TenderStatus.COMPLETE:
      return ['award', 'contract'];
  }
}

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : undefined);

function drop<T extends Record<string, unknown>>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T;
}

/**
 * The tender as an OCDS 1.1 release package with one release: the tender's state now (a
 * snapshot, dated by its last change), with parties, awards and, once complete, contracts. The
 * sealed-bid rule holds here too: who bid (tenderers, numberOfTenderers) is told only once the
 * tender period is over, and awards only past ACTIVE, as everywhere else.
 */
export async function tenderReleasePackage(em: EntityManager, principal: Principal, tender: Tender, settings: OcdsSettings): Promise<Record<string, unknown>> {
  const [awards] = await new AwardService(em, principal).ofTenders([tender]);
  const now = await dbNow(em);
  const periodOver = tender.status !== TenderStatus.DRAFT && tender.status !== TenderStatus.ACTIVE && (tender.status !== TenderStatus.CANCELLED || now >= tender.tenderPeriodEnd);
  const bids = periodOver ? await em.find(Bid, { tenderId: tender.id, status: { $ne: BidStatus.WITHDRAWN } }, { fields: ['vendorId'] }) : [];
  const tendererIds = [...new Set(bids.map((bid) => bid.vendorId))];
  const supplierIds = [...new Set(awards.filter((a) => a.status !== AwardStatus.CANCELLED).map((a) => a.vendorId))];
  const vendorIds = [...new Set([...tendererIds, ...awards.map((a) => a.vendorId)])];
  const vendors = vendorIds.length ? await em.find(Vendor, { id: { $in: vendorIds } }) : [];
  const vendorById = new Map(vendors.map((vendor) => [vendor.id, vendor]));
  const reference = (id: string) => drop({ id, name: vendorById.get(id)?.name });

  const ocid = `${settings.ocidPrefix}-${tender.id}`;
  const date = new Date(Math.max(tender.updatedAt.getTime(), ...awards.map((award) => award.updatedAt.getTime())));
  const buyer = { id: tender.accountId };
  const parties = [
    { id: tender.accountId, roles: ['buyer', 'procuringEntity'] },
    ...vendorIds.map((id) => {
      const vendor = vendorById.get(id);
      const roles = [...(tendererIds.includes(id) ? ['tenderer'] : []), ...(supplierIds.includes(id) ? ['supplier'] : [])];
      return drop({
        id,
        name: vendor?.name,
        identifier: vendor ? { id: vendor.registrationNumber, legalName: vendor.name } : undefined,
        address: vendor ? { countryName: vendor.country } : undefined,
        roles: roles.length ? roles : ['tenderer'],
      });
    }),
  ];
  const release = drop({
    ocid,
    id: `${tender.id}-${date.getTime()}`,
    date: date.toISOString(),
    tag: tagsOf(tender),
    initiationType: 'tender',
    language: 'en',
    parties,
    buyer,
    tender: drop({
      id: tender.id,
      title: tender.title,
      description: tender.description,
      status: TENDER_STATUS[tender.status],
      procuringEntity: buyer,
      value: tender.value,
      procurementMethod: tender.procurementMethod === ProcurementMethod.SELECTIVE ? 'selective' : 'open',
      awardCriteria: tender.awardCriteria === AwardCriteria.RATED_CRITERIA ? 'ratedCriteria' : 'priceOnly',
      submissionMethod: ['electronicSubmission'],
      tenderPeriod: drop({ startDate: iso(tender.tenderPeriodStart), endDate: iso(tender.tenderPeriodEnd) }),
      awardPeriod: tender.awardPeriod ? drop({ startDate: iso(tender.awardPeriodStart), endDate: iso(tender.awardPeriodEnd) }) : undefined,
      numberOfTenderers: periodOver ? tendererIds.length : undefined,
      tenderers: periodOver ? tendererIds.map(reference) : undefined,
      documents: tender.documentIds.map((id) => ({ id, documentType: 'biddingDocuments' })),
      lots: tender.lots.length ? tender.lotList.map((lot) => drop({ id: lot.id, title: lot.title, description: lot.description ?? undefined, value: lot.value, status: TENDER_STATUS[tender.status] })) : undefined,
    }),
    awards: awards.length ? awards.map((award) => awardOf(award, reference)) : undefined,
    contracts:
      tender.status === TenderStatus.COMPLETE
        ? awards.filter((award) => award.status === AwardStatus.ACTIVE).map((award) => ({ id: `${award.id}-contract`, awardID: award.id, status: 'active', value: award.value }))
        : undefined,
  });
  return drop({
    uri: `urn:ocds:${ocid}:${release.id}`,
    version: OCDS_VERSION,
    extensions: tender.lots.length ? [LOTS_EXTENSION] : undefined,
    publishedDate: date.toISOString(),
    publisher: { name: settings.publisherName },
    releases: [release],
  });
}

function awardOf(award: Award, reference: (id: string) => Record<string, unknown>): Record<string, unknown> {
  return drop({
    id: award.id,
    status: award.status,
    date: award.createdAt.toISOString(),
    value: award.value,
    suppliers: [reference(award.vendorId)],
    relatedLots: award.lotId ? [award.lotId] : undefined,
  });
}
