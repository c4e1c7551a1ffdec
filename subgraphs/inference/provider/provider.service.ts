import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../../core/errors.js';
import type { PlatformPubSub } from '../../shared/pubsub.js';
import { Provider } from './provider.entity.js';
import type { ProviderStatus } from './provider-status.js';

/** Where provider status changes are published: one topic, providers are platform-wide. */
export const PROVIDER_STATUS_TOPIC = 'inference:provider-status';

/** The configured providers as last synced (provider-status.feed.ts); visible to every principal alike. */
export class ProviderService {
  constructor(private readonly em: EntityManager) {}

  list(): Promise<Provider[]> {
    return this.em.find(Provider, {}, { orderBy: { id: 'asc' } });
  }

  find(id: string): Promise<Provider | null> {
    return this.em.findOne(Provider, { id });
  }

  /**
   * Sets a provider's status (an operator's override, admitted by its resolver to admin keys only; the next status change the
   * health probes see replaces it) and publishes the change after the commit, for live status subscribers.
   */
  async setStatus(pubsub: PlatformPubSub, id: string, status: ProviderStatus): Promise<Provider> {
    const provider = await this.find(id);
    if (!provider) throw new DomainError('NOT_FOUND', `No provider with id "${id}"`, { param: 'id', reason: 'provider_not_found' });
    provider.status = status;
    await this.em.flush();
    pubsub.publish(PROVIDER_STATUS_TOPIC, { id: provider.id });
    return provider;
  }

  /** Many providers in one statement, in the order of `ids` (null where unknown). */
  async findMany(ids: readonly string[]): Promise<(Provider | null)[]> {
    const rows = await this.em.find(Provider, { id: { $in: [...ids] } });
    const byId = new Map(rows.map((p) => [p.id, p]));
    return ids.map((id) => byId.get(id) ?? null);
  }
}
