import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../core/database-unavailable.js';

const withCode = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), fields);

describe('telling a database outage from other failures', () => {
  it('takes a refused or lost connection and a server going away for an outage', () => {
    expect(isDatabaseUnavailable(withCode('connect ECONNREFUSED 127.0.0.1:5433', { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(withCode('terminating connection due to administrator command', { code: '57P01' }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('does not take a client that dropped its request body (body-parser: ECONNABORTED with an HTTP status) for one', () => {
    expect(isDatabaseUnavailable(withCode('request aborted', { code: 'ECONNABORTED', status: 400, type: 'request.aborted' }))).toBe(false);
  });

  it('does not take a refused statement for one', () => {
    expect(isDatabaseUnavailable(withCode('duplicate key value violates unique constraint', { code: '23505' }))).toBe(false);
  });
});
