import { composeServices } from '@apollo/composition';
import { printSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { buildPartsSchema } from '../subgraphs/shared/subgraph.js';
import { SUBGRAPH_PARTS } from './subgraph-catalog.js';

/** Default internal address of each subgraph; the gateway overrides them from its configuration. */
const DEFAULT_URLS: Record<string, string> = {
  membership: 'http://127.0.0.1:4101/graphql',
  marketplace: 'http://127.0.0.1:4102/graphql',
  inference: 'http://127.0.0.1:4103/graphql',
  traceroute: 'http://127.0.0.1:4104/graphql',
};

export interface Composition {
  subgraphSdls: Record<string, string>;
  supergraphSdl: string;
}

/** Emits each subgraph's SDL from the code and composes the supergraph; throws on composition errors. */
export async function composeSupergraph(): Promise<Composition> {
  const subgraphSdls: Record<string, string> = {};
  for (const parts of SUBGRAPH_PARTS) {
    subgraphSdls[parts.name] = printSubgraphSchema(await buildPartsSchema(parts)).trim() + '\n';
  }
  const result = composeServices(
    Object.entries(subgraphSdls).map(([name, sdl]) => ({ name, typeDefs: parse(sdl), url: DEFAULT_URLS[name] })),
  );
  if (result.errors) {
    throw new Error(`The subgraphs do not compose:\n${result.errors.map((e) => `- ${e.message}`).join('\n')}`);
  }
  return { subgraphSdls, supergraphSdl: result.supergraphSdl.trim() + '\n' };
}
