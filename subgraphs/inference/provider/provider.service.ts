import type { EntityManager } from '@mikro-orm/postgresql';
import { Provider } from './provider.entity.js';

/** The providers the gateway fronts; visible to every principal alike. */
export class ProviderService {
  constructor(private readonly em: EntityManager) {}

  list(): Promise<Provider[]> {
    return this.em.find(Provider, {}, { orderBy: { id: 'asc' } });
  }

  find(id: string): Promise<Provider | null> {
    return this.em.findOne(Provider, { id });
  }

  /** Many providers in one statement, in the order of `ids` (null where unknown). */
  async findMany(ids: readonly string[]): Promise<(Provider | null)[]> {
    const rows = await this.em.find(Provider, { id: { $in: [...ids] } });
    const byId = new Map(rows.map((p) => [p.id, p]));
    return ids.map((id) => byId.get(id) ?? null);
  }
}
