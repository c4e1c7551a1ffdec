import type { MikroORM } from '@mikro-orm/postgresql';
import type { Caller } from '../protocol/caller.js';
import { isKeyless, type WireInterface } from '../protocol/wire-interface.js';

/** An item of a conversation as the store holds it: an input or output item with its id. */
export type StoredItem = { id: string; type?: string } & Record<string, unknown>;

/** A kept response: the Response object as answered and its input items (null: too large to keep). */
export interface KeptResponse {
  response: { id: string; output: StoredItem[] } & Record<string, unknown>;
  inputItems: StoredItem[] | null;
}

/**
 * The largest input (its items as JSON) kept with a response. A body may bring 25 MiB of images,
 * and the keyless mounts store for anyone: past this the answer and its output are kept (later
 * turns still refer to them) but not the input, so a client continues by sending it again.
 */
export const DEFAULT_RESPONSE_MAX_INPUT_BYTES = 1_048_576;

/** A previous_response_id chain that cannot be replayed: a link's input was too large to keep. */
export class InputNotKept {
  constructor(readonly responseId: string) {}
}

const TABLE = '"inference"."stored_response"';
/** The ids the store can hold (OpenAI's `resp_...`, `msg_...`, `fc_...`); any other names nothing kept and is not looked up. */
const KEEPABLE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const keepable = (id: string) => KEEPABLE_ID.test(id);

/**
 * Responses API answers kept in PostgreSQL (stored-response.entity.ts) for the scope that made
 * them: a keyed mount's account, or the one keyless scope of the proxy and the gateway, whose
 * response ids are unguessable. Another scope's response reads as absent, as an expired one does
 * before the retention sweep deletes it.
 */
export class ResponseStore {
  constructor(
    private readonly orm: MikroORM,
    private readonly settings: { retentionDays: number; maxInputBytes: number },
  ) {}

  /** The scope a caller's responses are kept in. */
  static scopeOf(iface: WireInterface, caller: Caller): string {
    if (isKeyless(iface)) return 'keyless';
    if (!caller.principal) throw new Error(`a call on ${iface} came without its key's principal`);
    return `account:${caller.principal.accountId}`;
  }

  async keep(scope: string, kept: KeptResponse, previousResponseId: string | null): Promise<void> {
    const now = new Date();
    const expires = new Date(now.getTime() + this.settings.retentionDays * 86_400_000);
    const input = JSON.stringify(kept.inputItems);
    const inputKept = kept.inputItems !== null && Buffer.byteLength(input) <= this.settings.maxInputBytes;
    const itemIds = [...new Set([...(inputKept ? kept.inputItems! : []), ...kept.response.output].map((item) => item.id))].filter(keepable);
    await this.connection.execute(
      `insert into ${TABLE} ("id", "scope", "response", "input_items", "previous_response_id", "item_ids", "created_at", "expires_at") values (?, ?, ?::json, ?::json, ?, array(select jsonb_array_elements_text(?::jsonb)), ?, ?)`,
      [kept.response.id, scope, JSON.stringify(kept.response), inputKept ? input : null, previousResponseId, JSON.stringify(itemIds), now, expires],
      'run',
    );
  }

  async get(scope: string, id: string): Promise<KeptResponse | null> {
    if (!keepable(id)) return null;
    const rows = await this.connection.execute<{ response: KeptResponse['response']; input_items: StoredItem[] | null }[]>(
      `select "response", "input_items" from ${TABLE} where "id" = ? and "scope" = ? and "expires_at" > now()`,
      [id, scope],
      'all',
    );
    const row = rows[0];
    return row ? { response: row.response, inputItems: row.input_items } : null;
  }

  /** Deletes a response; false when the scope has none by that id. */
  async delete(scope: string, id: string): Promise<boolean> {
    if (!keepable(id)) return false;
    const result = await this.connection.execute<{ affectedRows?: number }>(`delete from ${TABLE} where "id" = ? and "scope" = ? and "expires_at" > now()`, [id, scope], 'run');
    return ((result as { affectedRows?: number }).affectedRows ?? 0) > 0;
  }

  /**
   * The conversation a response ends: its previous responses' input items and output, oldest
   * first, then its own; null when the scope has no such response, InputNotKept when a link's input
   * was too large to keep. A chain stops at a link that is gone (deleted or expired).
   */
  async conversation(scope: string, id: string): Promise<StoredItem[] | InputNotKept | null> {
    if (!keepable(id)) return null;
    const rows = await this.connection.execute<{ id: string; input_items: StoredItem[] | null; output: StoredItem[] }[]>(
      `with recursive "chain" ("id", "previous_response_id", "input_items", "output", "depth") as (
         select "id", "previous_response_id", "input_items", "response"->'output', 0 from ${TABLE} where "id" = ? and "scope" = ? and "expires_at" > now()
         union all
         select r."id", r."previous_response_id", r."input_items", r."response"->'output', c."depth" + 1
         from ${TABLE} r join "chain" c on r."id" = c."previous_response_id" where r."scope" = ? and r."expires_at" > now()
       ) select "id", "input_items", "output" from "chain" order by "depth" desc`,
      [id, scope, scope],
      'all',
    );
    if (rows.length === 0) return null;
    const unkept = rows.find((row) => row.input_items === null);
    if (unkept) return new InputNotKept(unkept.id);
    return rows.flatMap((row) => [...row.input_items!, ...row.output]);
  }

  /** The kept items of the scope by id (input or output items of any of its responses); absent ids are left out. */
  async items(scope: string, ids: string[]): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    ids = ids.filter(keepable);
    if (ids.length === 0) return found;
    const rows = await this.connection.execute<{ input_items: StoredItem[] | null; output: StoredItem[] }[]>(
      `select "input_items", "response"->'output' as "output" from ${TABLE} where "scope" = ? and "expires_at" > now() and "item_ids" && array(select jsonb_array_elements_text(?::jsonb))`,
      [scope, JSON.stringify(ids)],
      'all',
    );
    const wanted = new Set(ids);
    for (const row of rows) {
      for (const item of [...(row.input_items ?? []), ...row.output]) if (wanted.has(item.id) && !found.has(item.id)) found.set(item.id, item);
    }
    return found;
  }

  private get connection() {
    return this.orm.em.getConnection();
  }
}
