import type { MikroORM } from '@mikro-orm/postgresql';
import { openIdentityStore } from '../../identity/index.js';
import { LocalKeyStore } from '../../identity/local-key-store.js';
import { createMembershipSubgraph } from '../../subgraphs/membership/index.js';
import type { Subgraph } from '../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from './database.js';
import { TEST_SECRET } from './subgraph-harness.js';

type Extra = Omit<Parameters<typeof createMembershipSubgraph>[0], 'databaseUrl' | 'internalSecret' | 'keyStore'> & {
  /** The key store's cap on active live and test keys (MAX_ACTIVE_KEYS_PER_ACCOUNT). */
  maxActiveKeysPerAccount?: number;
};

export interface MembershipTestbed {
  db: Awaited<ReturnType<typeof createTestDatabase>>;
  identityOrm: MikroORM;
  subgraph: Subgraph;
  /** Closes the subgraph and the key store, then drops the database. */
  close(): Promise<void>;
}

/** The membership subgraph (with the edge's key store, in process) on a fresh database of its own, built but not listening. */
export async function startMembershipSubgraph({ maxActiveKeysPerAccount, ...extra }: Extra = {}): Promise<MembershipTestbed> {
  const db = await createTestDatabase();
  const identityOrm = await openIdentityStore(db.url);
  const subgraph = await createMembershipSubgraph({
    databaseUrl: db.url,
    internalSecret: TEST_SECRET,
    keyStore: new LocalKeyStore(identityOrm, { maxActiveKeysPerAccount }),
    ...extra,
  });
  return {
    db,
    identityOrm,
    subgraph,
    close: async () => {
      await subgraph.close();
      await identityOrm.close(true);
      await db.drop();
    },
  };
}
