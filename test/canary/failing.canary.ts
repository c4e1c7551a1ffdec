import { expect, test } from 'vitest';
import { createTestDatabase } from '../support/database.js';

// Deliberately failing, and kept out of the suite's `include`: .ci/run runs it under the suite's
// own configuration and global setup (the embedded PostgreSQL) and fails unless that run exits
// non-zero, so nothing in the set-up can again turn a failing run into exit status 0.
test('canary: a failing assertion must fail the run', async () => {
  const database = await createTestDatabase();
  await database.drop();
  expect(1).toBe(2);
});
