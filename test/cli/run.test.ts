import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../cli/run.js';

// None of these command lines may reach a database; if one did, it would fail on a closed port
// with a message no test below expects.
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cli-run-'));
  vi.stubEnv('DATABASE_URL', 'postgres://nobody:nothing@127.0.0.1:1/none');
  vi.stubEnv('DATA_DIR', dataDir);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(dataDir, { recursive: true, force: true });
});

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr };
}

describe('runCli before any database is opened', () => {
  it.each([[[]], [['keys', 'rotate']], [['frobnicate']]])('%j prints the usage on stderr and exits 2', async (argv) => {
    const result = await run(...argv);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('Usage:');
  });

  it.each([[['help']], [['--help']], [['-h']]])('%j prints the usage on stdout and exits 0', async (argv) => {
    const result = await run(...argv);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('keys create --kind <live|test|text|image|traceroute|admin> --account <slug>');
    expect(result.stdout).toContain('traceroute import <file>...');
  });

  it.each([[['keys']], [['help', 'keys']], [['keys', '--help']]])('%j lists the keys commands on stdout and exits 0', async (argv) => {
    const result = await run(...argv);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.split('\n').filter((line) => line.startsWith('  npm run'));
    expect(lines.map((line) => line.split(' ').slice(7, 9).join(' '))).toEqual(['keys create', 'keys list', 'keys plan', 'keys disable', 'keys enable', 'keys expire', 'help [<command>]']);
  });

  it('keys create -h shows the keys create usage on stdout and exits 0', async () => {
    const result = await run('keys', 'create', '-h');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('keys create --kind <live|test|text|image|traceroute|admin> --account <slug>');
    expect(result.stdout).not.toContain('keys list');
  });

  it.each([
    [['keys', 'create', '--account', 'acme'], '--kind is required'],
    [['keys', 'create', '--kind', 'live'], '--account is required'],
    [['keys', 'create', '--kind', 'live', '--account', 'acme', '--bogus'], "Unknown option '--bogus'"],
    [['keys', 'create', '--kind', '--account', 'acme'], "'--kind"],
    [['keys', 'list', 'acme'], '"keys list" takes no positional arguments'],
    [['keys', 'disable'], '"keys disable" takes <id>'],
    [['keys', 'disable', 'key_a', 'key_b'], '"keys disable" takes <id>'],
    [['keys', 'list', '--format', 'yaml'], '--format must be one of json, table, got "yaml"'],
    [['keys', 'list', '--format'], '--format takes one of json, table'],
    [['keys', 'create', '--kind', 'live', '--account', 'acme', '--format', 'table'], "Unknown option '--format'"],
  ])('%j is a usage error (exit 2): %s', async (argv, message) => {
    const result = await run(...argv);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr.split('\n')[0]).toContain(message);
    expect(result.stderr).toContain('Usage:');
  });

  it.each([
    [['--kind', 'gold'], '--kind must be one of live, test, text, image, traceroute, admin, got "gold"'],
    [['--kind', 'live', '--expires-at', 'next tuesday'], '--expires-at must be an ISO 8601 date'],
    [['--kind', 'live', '--expires-at', '2030-02-30'], '--expires-at must be an ISO 8601 date'],
    [['--kind', 'live', '--expires-at', '2020-01-01'], '--expires-at must be in the future'],
  ])('keys create %j fails with one line (exit 1): %s', async (flags, message) => {
    const result = await run('keys', 'create', '--account', 'acme', ...flags);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^error: [^\n]+\n$/);
    expect(result.stderr).toContain(message);
  });
});
