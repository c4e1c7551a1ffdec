import { DomainError } from '../../../core/errors.js';
import type { Principal } from '../../../core/principal.js';
import type { CreatedKey, KeyStore, KeyView } from '../../../core/key-store.js';
import { MembershipKeyKind } from './api-key.type.js';

/**
 * Settings, API Keys for the membership platform. A live key manages the account's live and
 * test keys; a test key, being a sandbox, manages test keys only. A dashboard session acts as a
 * live or test principal the same way; a viewer only lists, as it runs no mutation
 * (mutation-roles.ts). A revoke disables the key in the edge's key store, which evicts it from
 * every edge's key cache at once.
 */
export class ApiKeySettingsService {
  constructor(
    private readonly keyStore: KeyStore,
    private readonly principal: Principal,
  ) {}

  private manageable(kind: string): boolean {
    if (this.principal.kind === 'live') return kind === 'live' || kind === 'test';
    return this.principal.kind === 'test' && kind === 'test';
  }

  private assertMembershipKey(): void {
    if (this.principal.kind !== 'live' && this.principal.kind !== 'test') {
      throw new DomainError('FORBIDDEN', 'API keys are managed with a live or test membership key');
    }
  }

  async list(): Promise<KeyView[]> {
    this.assertMembershipKey();
    const keys = await this.keyStore.listKeys({ account: this.principal.account });
    return keys.filter((key) => this.manageable(key.kind));
  }

  async create(kind: MembershipKeyKind, name?: string | null): Promise<CreatedKey> {
    this.assertMembershipKey();
    if (!this.manageable(kind)) {
      throw new DomainError('FORBIDDEN', 'A test key cannot issue live keys', { param: 'kind' });
    }
    return this.keyStore.createKey({ account: this.principal.account, kind, name });
  }

  async revoke(id: string): Promise<KeyView> {
    const visible = (await this.list()).some((key) => key.id === id);
    if (!visible) throw new DomainError('NOT_FOUND', `No API key with id "${id}"`, { param: 'id' });
    return this.keyStore.disableKey(id, this.principal.account);
  }
}
