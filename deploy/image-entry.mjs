// The image's entrypoint: runs the compiled entry named by the first argument (platform/entries/),
// so one image serves every service. Plain JavaScript, beside the compiled dist/.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const entries = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/platform/entries');
const known = readdirSync(entries).filter((file) => file.endsWith('.js')).map((file) => file.slice(0, -3)).sort();
const name = process.argv[2];
if (!name || !known.includes(name)) {
  process.stderr.write(`${name ? `No entry "${name}"` : 'Name an entry'}: one of ${known.join(', ')}\n`);
  process.exit(2);
}
await import(pathToFileURL(path.join(entries, `${name}.js`)).href);
