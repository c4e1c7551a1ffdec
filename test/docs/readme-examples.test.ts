import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

// Every curl example of the README and of the membership REST reference runs as written against a
// running platform (on a free port instead of 4000), with the keys the README tells the reader to
// create and the files the examples name, and answers without an error.

const run = promisify(execFile);
const readme = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
const membershipReference = readFileSync(path.resolve(import.meta.dirname, '../../docs/membership-api.md'), 'utf8');

/** A document's curl commands, in code blocks and inline code, continuation lines joined. */
function curlExamples(text = readme): string[] {
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1].replace(/\\\n\s*/g, ' '));
  const fromBlocks = blocks.flatMap((block) => block.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('curl ')));
  const inline = [...text.matchAll(/`(curl [^`]+)`/g)].map((match) => match[1]);
  return [...fromBlocks, ...inline];
}

let platform: TestPlatform;
let env: NodeJS.ProcessEnv;
/** Where the examples run: the files they upload are there. */
let cwd: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  cwd = await mkdtemp(path.join(os.tmpdir(), 'readme-examples-'));
  const pdf = await PDFDocument.create();
  pdf.addPage().drawText('Invoice INV-2026-11 for November dues: 25.00 EUR', { font: await pdf.embedFont(StandardFonts.Helvetica), x: 50, y: 700, size: 12 });
  await writeFile(path.join(cwd, 'invoice.pdf'), await pdf.save());
  await writeFile(path.join(cwd, 'notes.txt'), 'Minutes of the board meeting: the regatta budget was approved.\n');
  env = {
    ...process.env,
    KEY: await platform.issueKey('acme'),
    TRACE_KEY: await platform.issueKey('lab', 'traceroute'),
    TEXT_KEY: await platform.issueKey('acme', 'text'),
  };
});

afterAll(async () => {
  await platform?.close();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

describe('the README\'s examples', () => {
  it('are found, one for each interface the tour names', () => {
    const examples = curlExamples();
    expect(examples.length).toBeGreaterThanOrEqual(6);
    for (const mount of ['/api/v1/members', '/graphql', '/api/v1/events', '/v1/public/traces', '/inference/text/v1/models']) {
      expect(examples.some((example) => example.includes(mount)), mount).toBe(true);
    }
  });

  it('run as written and answer without an error, the membership reference\'s too', async () => {
    const port = new URL(platform.baseUrl).port;
    const examples = [...curlExamples(), ...curlExamples(membershipReference)];
    expect(examples.length).toBeGreaterThanOrEqual(10);
    for (const example of examples) {
      const command = example.replaceAll('localhost:4000', `127.0.0.1:${port}`);
      const { stdout } = await run('bash', ['-c', `set -e; ${command}`], { env, cwd });
      const answer = JSON.parse(stdout) as Record<string, unknown>;
      expect(answer, example).not.toHaveProperty('error');
      expect(answer, example).not.toHaveProperty('errors');
    }
  });
});
