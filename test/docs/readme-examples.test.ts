import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

// Every curl example of the README runs as written against a running platform (on a free port
// instead of 4000), with the keys the README tells the reader to create, and answers without an
// error.

const run = promisify(execFile);
const readme = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

/** The README's curl commands, in code blocks and inline code, continuation lines joined. */
function curlExamples(): string[] {
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1].replace(/\\\n\s*/g, ' '));
  const fromBlocks = blocks.flatMap((block) => block.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('curl ')));
  const inline = [...readme.matchAll(/`(curl [^`]+)`/g)].map((match) => match[1]);
  return [...fromBlocks, ...inline];
}

let platform: TestPlatform;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  platform = await startTestPlatform();
  env = {
    ...process.env,
    KEY: await platform.issueKey('acme'),
    TRACE_KEY: await platform.issueKey('lab', 'traceroute'),
    TEXT_KEY: await platform.issueKey('acme', 'text'),
  };
});

afterAll(async () => {
  await platform?.close();
});

describe('the README\'s examples', () => {
  it('are found, one for each interface the tour names', () => {
    const examples = curlExamples();
    expect(examples.length).toBeGreaterThanOrEqual(6);
    for (const mount of ['/api/v1/members', '/graphql', '/api/v1/events', '/v1/public/traces', '/inference/text/v1/models']) {
      expect(examples.some((example) => example.includes(mount)), mount).toBe(true);
    }
  });

  it('run as written and answer without an error', async () => {
    const port = new URL(platform.baseUrl).port;
    for (const example of curlExamples()) {
      const command = example.replaceAll('localhost:4000', `127.0.0.1:${port}`);
      const { stdout } = await run('bash', ['-c', `set -e; ${command}`], { env });
      const answer = JSON.parse(stdout) as Record<string, unknown>;
      expect(answer, example).not.toHaveProperty('error');
      expect(answer, example).not.toHaveProperty('errors');
    }
  });
});
