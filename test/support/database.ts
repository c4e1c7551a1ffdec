import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { ensureDatabaseExists } from '../../platform/database.js';

/**
 * A fresh database for one test file on the run's PostgreSQL server; `drop` removes it.
 * Call from beforeAll, and `drop` from afterAll after closing every ORM on it.
 */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = inject('postgresServerUrl');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const url = await ensureDatabaseExists(serverUrl, name);
  return {
    url,
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
