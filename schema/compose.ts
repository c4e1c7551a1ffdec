import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeSupergraph } from './composition.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** `npm run compose`: writes schema/<subgraph>.graphql and schema/supergraph.graphql. */
const composition = await composeSupergraph();
for (const [name, sdl] of Object.entries(composition.subgraphSdls)) {
  await writeFile(path.join(here, `${name}.graphql`), sdl);
}
const target = path.join(here, 'supergraph.graphql');
const before = await readFile(target, 'utf8').catch(() => '');
await writeFile(target, composition.supergraphSdl);
console.log(before === composition.supergraphSdl ? 'supergraph unchanged' : `wrote ${path.relative(process.cwd(), target)}`);
