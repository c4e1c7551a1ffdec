import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../schema/composition.js';
import { readSupergraph } from '../../schema/supergraph.js';

describe('the committed supergraph', () => {
  it('is what the subgraphs compose to now (run `npm run compose` when this fails)', async () => {
    const composition = await composeSupergraph();
    expect(readSupergraph()).toBe(composition.supergraphSdl);
    for (const [name, sdl] of Object.entries(composition.subgraphSdls)) {
      expect(readFileSync(new URL(`../../schema/${name}.graphql`, import.meta.url), 'utf8'), `${name}.graphql`).toBe(sdl);
    }
  });

  it('composes all four subgraphs with federation 2', async () => {
    const { supergraphSdl } = await composeSupergraph();
    for (const graph of ['MEMBERSHIP', 'MARKETPLACE', 'INFERENCE', 'TRACEROUTE']) {
      expect(supergraphSdl).toContain(`${graph} @join__graph`);
    }
  });
});
