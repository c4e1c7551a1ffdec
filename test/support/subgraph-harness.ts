import { graphql, type ExecutionResult } from 'graphql';
import type { Subgraph } from '../../subgraphs/shared/subgraph.js';
import { signPrincipal, type Principal } from '../../core/principal.js';

export const TEST_SECRET = 'test-internal-secret-test-internal-secret';

let accountCounter = 0;

/** A principal for a fresh account; `mode` picks live or test data. */
export function principalFor(account = `acct-${++accountCounter}`, kind: Principal['kind'] = 'live'): Principal {
  return {
    accountId: `00000000-0000-4000-8000-${String(++accountCounter).padStart(12, '0')}`,
    account,
    keyId: `key_test${accountCounter}`,
    kind,
    mode: kind === 'test' ? 'test' : 'live',
  };
}

/** Runs one operation against a built subgraph as `principal` would through the edge. */
export async function run<T = Record<string, unknown>>(
  subgraph: Subgraph,
  principal: Principal,
  source: string,
  variableValues?: Record<string, unknown>,
): Promise<ExecutionResult<T>> {
  const contextValue = subgraph.createContext(signPrincipal(principal, TEST_SECRET));
  return (await graphql({ schema: subgraph.schema, source, variableValues, contextValue })) as ExecutionResult<T>;
}
