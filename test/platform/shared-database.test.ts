import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSharedDatabase } from '../../platform/shared-database.js';
import { DatabaseUnreachableError } from '../../platform/database-unreachable.error.js';
import { loadConfig } from '../../platform/config.js';
import { openPlatformDatabase, portIsFree } from '../../platform/database.js';
import { freePort } from '../support/free-port.js';
import { runCliProcess } from '../cli/cli-process.js';

// A platform data directory of this file's own, as if `npm start` had never run here.
let dataDir: string;
let port: number;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cli-embedded-'));
  port = await freePort();
});

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function configFor(embeddedPort: number, databaseUrl?: string) {
  return loadConfig({ DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(embeddedPort), DATABASE_URL: databaseUrl });
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

describe('the CLI without DATABASE_URL', () => {
  it('starts the embedded PostgreSQL under DATA_DIR for the command and stops it afterwards', async () => {
    const run = await runCliProcess(['keys', 'create', '--kind', 'live', '--account', 'solo'], {
      DATABASE_URL: undefined,
      DATA_DIR: dataDir,
      EMBEDDED_PG_PORT: String(port),
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'live', account: 'solo' });
    expect(existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    expect(await portIsFree(port)).toBe(true);
  });

  it("uses a running platform's embedded PostgreSQL and leaves it running", async () => {
    const platform = await openPlatformDatabase({ databaseUrl: undefined, dataDir, embeddedPort: port });
    try {
      const database = await openSharedDatabase(configFor(port));
      expect(database.url).toBe(platform.url);
      await database.stop();
      expect(await answers(platform.url)).toBe(true);
    } finally {
      await platform.stop();
    }
  });

  it('starts the embedded PostgreSQL itself when nothing listens, and stop() stops it', async () => {
    const database = await openSharedDatabase(configFor(port));
    try {
      expect(database.embedded).toBe(true);
      expect(await answers(database.url)).toBe(true);
    } finally {
      await database.stop();
    }
    expect(await portIsFree(port)).toBe(true);
  });

  it('refuses a port where something other than the platform database answers', async () => {
    const impostor = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    try {
      const { port: impostorPort } = impostor.address() as net.AddressInfo;
      await expect(openSharedDatabase(configFor(impostorPort))).rejects.toBeInstanceOf(DatabaseUnreachableError);
    } finally {
      await new Promise((resolve) => impostor.close(resolve));
    }
  });
});

describe('the CLI with DATABASE_URL', () => {
  it('uses that database and never starts one', async () => {
    const url = 'postgres://someone:secret@db.example.org:5432/platform';
    const database = await openSharedDatabase(configFor(port, url));
    expect(database).toMatchObject({ url, embedded: false });
    await database.stop();
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  });
});
