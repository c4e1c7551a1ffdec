import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePng, renderText } from './text-image.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const script = path.join(here, 'fixtures', 'read-image.ts');
const tsx = path.resolve(here, '../../../../node_modules/tsx/dist/esm/index.mjs');

// A user and network namespace with nothing but a downed loopback: any fetch fails there.
const canIsolateNetwork = spawnSync('unshare', ['-rn', 'true']).status === 0;

let cwd: string;
let imageDir: string;

beforeAll(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'ocr-cwd-'));
  imageDir = await mkdtemp(path.join(tmpdir(), 'ocr-image-'));
  await writeFile(path.join(imageDir, 'text.png'), encodePng(renderText(['QUICK BROWN FOX'])));
});

afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
  await rm(imageDir, { recursive: true, force: true });
});

function readInChild(wrapper: string[]): { type: string; text?: string; extensions?: { ocr: { confidence: number } } }[] {
  const command = [...wrapper, process.execPath, '--import', tsx, script, path.join(imageDir, 'text.png')];
  const output = execFileSync(command[0], command.slice(1), { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  return JSON.parse(output);
}

describe('the OCR engine on a fresh machine', () => {
  it('reads an image from a working directory it leaves empty (no traineddata cache written)', async () => {
    const events = readInChild([]);
    expect(events.filter((e) => e.type === 'delta').map((e) => e.text).join('')).toBe('QUICK BROWN FOX');
    expect(events.at(-1)?.extensions?.ocr.confidence).toBeGreaterThan(60);
    expect(await readdir(cwd)).toEqual([]);
  });

  it.skipIf(!canIsolateNetwork)('reads an image with no network at all (nothing comes from a CDN)', async () => {
    const events = readInChild(['unshare', '-rn']);
    expect(events.filter((e) => e.type === 'delta').map((e) => e.text).join('')).toBe('QUICK BROWN FOX');
    expect(await readdir(cwd)).toEqual([]);
  });
});
