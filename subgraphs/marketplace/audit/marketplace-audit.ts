import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mode } from '../../../core/principal.js';
import { MarketplaceAudit } from './marketplace-audit.entity.js';

export interface Transition {
  accountId: string;
  mode: Mode;
  actor: string;
  subjectType: string;
  subjectId: string;
  from: string | null;
  to: string;
  reason?: string | null;
}

// Transitions of one transaction are recorded within the same millisecond; a clock that always
// moves forward keeps their order when the trail is sorted by time.
let lastStamp = 0;
function monotonicNow(): Date {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return new Date(lastStamp);
}

/**
 * Records a state change on the caller's EntityManager: it is persisted by the caller's flush,
 * so it commits (or rolls back) with the change it describes.
 */
export function recordTransition(em: EntityManager, transition: Transition): MarketplaceAudit {
  const row = em.create(MarketplaceAudit, {
    accountId: transition.accountId,
    mode: transition.mode,
    actor: transition.actor,
    subjectType: transition.subjectType,
    subjectId: transition.subjectId,
    from: transition.from,
    to: transition.to,
    reason: transition.reason ?? null,
    createdAt: monotonicNow(),
  });
  em.persist(row);
  return row;
}
