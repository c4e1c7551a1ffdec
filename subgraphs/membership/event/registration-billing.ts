import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import type { Member } from '../member/member.entity.js';
import type { Attendee } from './attendee.entity.js';
import type { Event } from './event.entity.js';

/** What becomes of a registration's invoice when its place is given up. */
export type ReleasedInvoice = 'paid' | 'voided';

/**
 * What a paid event's registrations cost, as the event aggregate asks for it. Finance implements
 * it (an open invoice per registration) and the subgraph hands it over in the context, so event/
 * never imports finance/ while finance/ confirms registrations: one way only, as for members.
 */
export interface RegistrationBilling {
  /** Opens the registration's invoice in `em`'s transaction, due by `dueAt`; answers its id. */
  billRegistration(em: EntityManager, principal: Principal, bill: { attendee: Attendee; event: Event; member: Member; dueAt: Date }): Promise<string>;
  /**
   * Locks the registration's invoice and voids it unless it is paid; answers which. Called before
   * the registration gives up its place, so a payment racing it either lands first (the place
   * stays) or finds the invoice void.
   */
  releaseRegistration(em: EntityManager, principal: Principal, invoiceId: string): Promise<ReleasedInvoice>;
}

/** The part of the membership context that registering reads. */
export interface RegistrationBillingContext {
  registrationBilling: RegistrationBilling;
}
