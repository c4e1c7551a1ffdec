import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { AuditEvent } from './audit-event.entity.js';
import type { AuditEventsArgs } from './audit.inputs.js';

type Snapshot = Record<string, unknown> | null;

// Events of one transaction are recorded within the same millisecond; a clock that always moves
// forward (by a millisecond at most per event) keeps their order in the trail, which sorts by time.
let lastStamp = 0;
function monotonicNow(): Date {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return new Date(lastStamp);
}

/** The audit trail of the principal's account and mode. */
export class AuditService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  /** Persists an event on the caller's EntityManager, so it commits (or not) with the change. */
  record(entity: string, entityId: string, action: string, before: Snapshot, after: Snapshot): AuditEvent {
    const event = this.em.create(AuditEvent, {
      accountId: this.principal.accountId,
      mode: this.principal.mode,
      keyId: this.principal.keyId,
      entity,
      entityId,
      action,
      before: before && jsonSafe(before),
      after: after && jsonSafe(after),
      createdAt: monotonicNow(),
    });
    this.em.persist(event);
    return event;
  }

  list(args: AuditEventsArgs): Promise<Page<AuditEvent>> {
    const where: Record<string, unknown>[] = [{ accountId: this.principal.accountId, mode: this.principal.mode }];
    if (args.entity) where.push({ entity: args.entity });
    if (args.entityId) {
      if (!UUID.test(args.entityId)) return Promise.resolve({ data: [], hasMore: false, nextCursor: null });
      where.push({ entityId: args.entityId });
    }
    return paginate(this.em, AuditEvent, where, args);
  }
}

function jsonSafe(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}
