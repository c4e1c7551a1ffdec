import type { KeyStore, KeyView } from '../../../core/key-store.js';
import { DomainError } from '../../../core/errors.js';
import { TracerouteKeyState, type TracerouteKeyType } from './traceroute-key.type.js';
import type { IssueTracerouteKeyArgs } from './traceroute-key.inputs.js';

function toKey(view: KeyView, now = new Date()): TracerouteKeyType {
  const state = view.disabledAt
    ? TracerouteKeyState.DISABLED
    : view.expiresAt && new Date(view.expiresAt) <= now
      ? TracerouteKeyState.EXPIRED
      : TracerouteKeyState.ACTIVE;
  return {
    id: view.id,
    account: view.account,
    name: view.name,
    prefix: view.prefix,
    hourlyLimit: view.hourlyLimit!,
    dailyLimit: view.dailyLimit!,
    state,
    createdAt: view.createdAt,
    disabledAt: view.disabledAt,
    expiresAt: view.expiresAt,
  };
}

/** The traceroute admin area: issuing and managing keys (its resolver admits admin keys only). */
export class TracerouteKeyService {
  constructor(private readonly keyStore: KeyStore) {}

  async list(account?: string | null): Promise<TracerouteKeyType[]> {
    return (await this.keyStore.listKeys({ kind: 'traceroute', account: account ?? undefined })).map((key) => toKey(key));
  }

  async issue(args: IssueTracerouteKeyArgs): Promise<TracerouteKeyType & { secret: string }> {
    const created = await this.keyStore.createKey({ ...args, kind: 'traceroute' });
    return { ...toKey(created), secret: created.secret };
  }

  async disable(id: string): Promise<TracerouteKeyType> {
    await this.assertTraceroute(id);
    return toKey(await this.keyStore.disableKey(id));
  }

  async enable(id: string): Promise<TracerouteKeyType> {
    await this.assertTraceroute(id);
    return toKey(await this.keyStore.enableKey(id));
  }

  async expire(id: string, at?: Date | null): Promise<TracerouteKeyType> {
    await this.assertTraceroute(id);
    return toKey(await this.keyStore.expireKey(id, at ?? new Date()));
  }

  /** The admin area manages traceroute keys only; other kinds are not found here. */
  private async assertTraceroute(id: string): Promise<void> {
    const keys = await this.keyStore.listKeys({ kind: 'traceroute' });
    if (!keys.some((key) => key.id === id)) {
      throw new DomainError('NOT_FOUND', `No traceroute key with id "${id}"`, { param: 'id', reason: 'key_not_found' });
    }
  }
}
