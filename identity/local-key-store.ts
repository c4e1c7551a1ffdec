import type { MikroORM } from '@mikro-orm/postgresql';
import type { CreatedKey, KeyFilter, KeyStore, KeyView, NewKey } from '../core/key-store.js';
import { IdentityService, type IdentitySettings } from './identity.service.js';

/**
 * The key store in the edge's own process: each call on a fresh EntityManager fork, so one store
 * serves every request (subgraphs in this process, and the internal endpoint for those apart).
 */
export class LocalKeyStore implements KeyStore {
  constructor(
    private readonly orm: MikroORM,
    private readonly settings: Pick<IdentitySettings, 'maxActiveKeysPerAccount'> = {},
  ) {}

  private service(): IdentityService {
    return new IdentityService(this.orm.em.fork(), this.settings);
  }

  listKeys(filter: KeyFilter = {}): Promise<KeyView[]> {
    return this.service().listKeys(filter);
  }

  createKey(input: NewKey): Promise<CreatedKey> {
    return this.service().createKey(input);
  }

  disableKey(id: string, account?: string): Promise<KeyView> {
    return this.service().disableKey(id, account);
  }

  enableKey(id: string): Promise<KeyView> {
    return this.service().enableKey(id);
  }

  expireKey(id: string, at: Date): Promise<KeyView> {
    return this.service().expireKey(id, at);
  }
}
