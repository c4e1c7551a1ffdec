import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { identityOrmOptions } from '../../identity/index.js';
import { openOrm } from '../../core/orm.js';
import { createTestDatabase } from '../support/database.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

// At LOG_LEVEL=trace the ORM's statements are logged for an operator; the values bound to them
// (session and CSRF tokens, password and key hashes) are not, and nothing goes around the logger.
it('logs statements at trace through the service logger, without their parameters', async () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const written: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    written.push(String(chunk));
    return write(chunk, ...rest);
  }) as typeof process.stdout.write;
  const orm = await openOrm({ clientUrl: db.url, logger: pino({ level: 'trace' }, stream), ...identityOrmOptions });
  try {
    await orm.em.getConnection().execute('select ?::text as token', ['csrf-secret-4f1c']);
  } finally {
    process.stdout.write = write;
    await orm.close(true);
  }
  const logged = lines.join('');
  expect(logged).toContain('select');
  expect(logged).toContain('as token');
  expect(logged).not.toContain('csrf-secret-4f1c');
  expect(written.join('')).not.toContain('csrf-secret-4f1c');
});
