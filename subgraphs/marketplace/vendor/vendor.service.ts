import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../../shared/not-found.error.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import type { Principal } from '../../../core/principal.js';
import { recordTransition } from '../audit/marketplace-audit.js';
import { assertVendorTransition, VendorStatus } from './vendor-status.js';
import { VendorExistsError, VendorNotApprovedError, VendorNotRegisteredError } from './vendor.errors.js';
import { Vendor } from './vendor.entity.js';
import type { QualifyVendorArgs, RegisterVendorArgs, VendorsArgs } from './vendor.inputs.js';

/**
 * The vendor registry of the principal's mode. Every account of the mode may read vendors (a
 * buyer invites them by id); qualification is the operator's alone (`qualify`, admin keys).
 */
export class VendorService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  list(args: VendorsArgs): Promise<Page<Vendor>> {
    return paginate(this.em, Vendor, [{ mode: this.principal.mode }, ...(args.status ? [{ status: args.status }] : [])], args);
  }

  async find(id: string): Promise<Vendor | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Vendor, { id, mode: this.principal.mode });
  }

  async findMany(ids: readonly string[]): Promise<(Vendor | null)[]> {
    const valid = ids.filter((id) => UUID.test(id));
    const rows = valid.length ? await this.em.find(Vendor, { id: { $in: valid }, mode: this.principal.mode }) : [];
    const byId = new Map(rows.map((vendor) => [vendor.id, vendor]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** The caller's own vendor profile in its mode, if registered. */
  mine(em: EntityManager = this.em): Promise<Vendor | null> {
    return em.findOne(Vendor, { accountId: this.principal.accountId, mode: this.principal.mode });
  }

  /** The caller's vendor, approved, or the coded reason it may not bid. */
  async approvedSelf(em: EntityManager): Promise<Vendor> {
    const vendor = await this.mine(em);
    if (!vendor) throw new VendorNotRegisteredError();
    if (vendor.status !== VendorStatus.APPROVED) throw new VendorNotApprovedError(vendor.status);
    return vendor;
  }

  async register(args: RegisterVendorArgs): Promise<Vendor> {
    const existing = await this.mine();
    if (existing) throw new VendorExistsError(existing.id);
    try {
      return await this.em.transactional(async (em) => {
        const vendor = em.create(Vendor, {
          accountId: this.principal.accountId,
          mode: this.principal.mode,
          name: args.name.trim(),
          country: args.country,
          registrationNumber: args.registrationNumber.trim(),
          contactEmail: args.contactEmail.trim().toLowerCase(),
          categories: [...new Set(args.categories.map((c) => c.trim()))],
        });
        recordTransition(em, { accountId: vendor.accountId, mode: vendor.mode, actor: this.principal.keyId, subjectType: 'vendor', subjectId: vendor.id, from: null, to: VendorStatus.PENDING });
        await em.flush();
        return vendor;
      });
    } catch (error) {
      // Two registrations at once: the unique (account, mode) index lets one through.
      if (error instanceof UniqueConstraintViolationException) {
        const winner = await this.em.fork().findOne(Vendor, { accountId: this.principal.accountId, mode: this.principal.mode });
        if (winner) throw new VendorExistsError(winner.id);
      }
      throw error;
    }
  }

  /**
   * The one qualification rule: only an admin key (the platform's operator) decides, in any
   * account and mode, along pending → approved → suspended → approved.
   */
  async qualify(args: QualifyVendorArgs): Promise<Vendor> {
    if (!UUID.test(args.id)) throw new NotFoundError('vendor', args.id);
    return this.em.transactional(async (em) => {
      const vendor = await em.findOne(Vendor, { id: args.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (!vendor) throw new NotFoundError('vendor', args.id);
      assertVendorTransition(vendor.status, args.status);
      recordTransition(em, { accountId: vendor.accountId, mode: vendor.mode, actor: this.principal.keyId, subjectType: 'vendor', subjectId: vendor.id, from: vendor.status, to: args.status, reason: args.reason ?? null });
      vendor.status = args.status;
      vendor.updatedAt = new Date();
      await em.flush();
      return vendor;
    });
  }
}
