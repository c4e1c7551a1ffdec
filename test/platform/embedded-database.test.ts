import { readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../identity/index.js';
import { openPlatformDatabase, portIsFree, startEmbeddedPostgres } from '../../platform/database.js';
import { capturedLogger } from '../support/captured-logger.js';
import { freePort } from '../support/free-port.js';

/**
 * The embedded PostgreSQL as the platform runs it: a supervised process that comes back after
 * SIGKILL and stops whatever state it is in, with a generated superuser password and a plain role
 * for the services.
 */
const dirs: string[] = [];
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'embedded-db-'));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** The error a connection or statement fails with, or undefined when it succeeds. */
async function failure(url: string, sql = 'select 1'): Promise<{ code?: string; message: string } | undefined> {
  try {
    await query(url, sql);
    return undefined;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

async function waitFor(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the embedded PostgreSQL under supervision', () => {
  let dir: string;
  let port: number;
  let server: Awaited<ReturnType<typeof startEmbeddedPostgres>>;
  const { logger, lines } = capturedLogger();
  const back = () => lines.filter((line) => line.msg === 'postgres is back').length;

  beforeAll(async () => {
    dir = await dataDir();
    port = await freePort();
    server = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port, logger });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('is started again after SIGKILL, with every committed row intact', async () => {
    await query(server.serverUrl, 'create table kept (id int primary key)');
    await query(server.serverUrl, 'insert into kept select generate_series(1, 100)');
    const first = server.server.pid!;
    process.kill(first, 'SIGKILL');
    await waitFor(() => back() === 1, 'the restart');
    expect(server.server.pid).not.toBe(first);
    expect(lines.some((line) => line.service === 'postgres' && line.signal === 'SIGKILL' && typeof line.restartInMs === 'number')).toBe(true);
    expect(await query(server.serverUrl, 'select count(*)::int as n from kept')).toEqual([{ n: 100 }]);
  }, 120_000);

  it('stops at once when it was killed and is waiting for its restart, and stays stopped', async () => {
    const pid = server.server.pid!;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid) && lines.filter((line) => line.service === 'postgres' && line.signal === 'SIGKILL').length === 2, 'the exit to be seen');
    await server.stop();
    const started = lines.filter((line) => line.msg === 'postgres started').length;
    // The backoff's first wait is 500 ms: a restart it had planned would have started by now.
    await new Promise((r) => setTimeout(r, 1500));
    expect(lines.filter((line) => line.msg === 'postgres started').length).toBe(started);
    await waitFor(() => portIsFree(port), 'the port to be free', 10_000);
  }, 120_000);

  it('stops cleanly while running: fast shutdown, then the port is free', async () => {
    const again = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port, logger });
    const pid = again.server.pid!;
    await again.stop();
    expect(alive(pid)).toBe(false);
    expect(await portIsFree(port)).toBe(true);
    expect(lines.filter((line) => line.service === 'postgres' && String(line.msg).includes('exited unexpectedly')).length).toBe(2);
  }, 120_000);
});

describe('a first start that fails', () => {
  it('rejects with what PostgreSQL said, and tries no restart', async () => {
    const dir = await dataDir();
    const port = await freePort();
    const made = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port });
    await made.stop();
    const conf = path.join(dir, 'postgres', 'postgresql.conf');
    writeFileSync(conf, `${readFileSync(conf, 'utf8')}\nno_such_setting = 1\n`);
    const { logger, lines } = capturedLogger();
    const failed = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port, logger }).catch((error: unknown) => error as Error);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(/^postgres exited before it was ready \(exit code 1\): [\s\S]*no_such_setting/);
    await new Promise((r) => setTimeout(r, 1000));
    expect(lines.filter((line) => line.msg === 'postgres started')).toHaveLength(1);
    expect(await portIsFree(port)).toBe(true);
  }, 120_000);
});

describe("the embedded PostgreSQL's credentials", () => {
  it('generates the passwords into DATA_DIR (mode 0600, stable across restarts) and connects the services as a plain role', async () => {
    const dir = await dataDir();
    const port = await freePort();
    const database = await openPlatformDatabase({ databaseUrl: undefined, dataDir: dir, embeddedPort: port });
    let passwords: string[];
    try {
      passwords = ['postgres-superuser-password', 'postgres-service-password'].map((name) => {
        const file = path.join(dir, name);
        expect(statSync(file).mode & 0o777, name).toBe(0o600);
        return readFileSync(file, 'utf8').trim();
      });
      for (const password of passwords) {
        expect(password).not.toBe('platform');
        expect(password.length).toBeGreaterThanOrEqual(32);
      }
      const url = new URL(database.url);
      expect(url.username).toBe('platform_service');
      expect(decodeURIComponent(url.password)).toBe(passwords[1]);

      // The services' role is no superuser, makes no roles or databases, and reads no other database.
      expect(await query(database.url, 'select rolsuper, rolcreaterole, rolcreatedb from pg_roles where rolname = current_user')).toEqual([
        { rolsuper: false, rolcreaterole: false, rolcreatedb: false },
      ]);
      expect((await failure(database.url, 'create role intruder login'))?.code).toBe('42501');
      expect((await failure(database.url, 'create database elsewhere'))?.code).toBe('42501');
      const otherDatabase = new URL(database.url);
      otherDatabase.pathname = '/postgres';
      expect((await failure(otherDatabase.toString()))?.code).toBe('42501');
      // The superuser answers only to its generated password.
      const former = new URL(database.superuserUrl!);
      former.password = 'platform';
      expect((await failure(former.toString()))?.code).toBe('28P01');

      // What the services need works as that role: the identity migrations, and its tables.
      const orm = await openIdentityStore(database.url);
      await orm.close(true);
      expect(await query(database.url, "select count(*)::int as n from pg_namespace where nspname = 'identity' and nspowner = (select oid from pg_roles where rolname = current_user)")).toEqual([{ n: 1 }]);
    } finally {
      await database.stop();
    }

    // A restart keeps both passwords.
    const restarted = await openPlatformDatabase({ databaseUrl: undefined, dataDir: dir, embeddedPort: port });
    try {
      expect(restarted.url).toBe(database.url);
      expect(await query(restarted.url, 'select count(*)::int as n from identity.api_key')).toEqual([{ n: 0 }]);
    } finally {
      await restarted.stop();
    }
  }, 180_000);

  it('moves a data directory made with the former fixed password to a generated one, its data handed to the services\' role', async () => {
    const dir = await dataDir();
    const port = await freePort();
    // A directory as the platform made it before: superuser `platform` with the password
    // `platform` (password authentication), the schemas and their objects owned by that superuser,
    // and no password file.
    const passwordFile = path.join(dir, 'postgres-superuser-password');
    writeFileSync(passwordFile, 'platform\n', { mode: 0o600 });
    const legacy = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port });
    try {
      await query(legacy.serverUrl, 'create database platform');
      const platformUrl = legacy.serverUrl.replace(/\/postgres$/, '/platform');
      const identity = await openIdentityStore(platformUrl);
      await identity.close(true);
      await query(platformUrl, 'create schema membership');
      await query(platformUrl, 'create table membership.note (id serial primary key, body text not null)');
      await query(platformUrl, "insert into membership.note (body) values ('kept')");
      await query(platformUrl, 'create function membership.shout(text) returns text language sql as $$ select upper($1) $$');
    } finally {
      await legacy.stop();
    }
    unlinkSync(passwordFile);
    const hba = path.join(dir, 'postgres', 'pg_hba.conf');
    writeFileSync(hba, readFileSync(hba, 'utf8').replace(/scram-sha-256/g, 'password'));

    const { logger, lines } = capturedLogger();
    const database = await openPlatformDatabase({ databaseUrl: undefined, dataDir: dir, embeddedPort: port, logger });
    try {
      expect(lines.some((line) => String(line.msg).includes('had the former fixed password'))).toBe(true);
      const superuserPassword = readFileSync(path.join(dir, 'postgres-superuser-password'), 'utf8').trim();
      expect(superuserPassword).not.toBe('platform');
      const formerPassword = new URL(database.superuserUrl!);
      formerPassword.password = 'platform';
      expect((await failure(formerPassword.toString()))?.code).toBe('28P01');
      // The services' role reads and writes what was there, replaces its functions and migrates.
      expect(await query(database.url, 'select body from membership.note')).toEqual([{ body: 'kept' }]);
      await query(database.url, "insert into membership.note (body) values ('new')");
      await query(database.url, "create or replace function membership.shout(text) returns text language sql as $$ select upper($1) || '!' $$");
      await query(database.url, 'alter table membership.note add column at timestamptz');
      const identity = await openIdentityStore(database.url);
      await identity.close(true);
      expect(await query(database.url, 'select rolsuper from pg_roles where rolname = current_user')).toEqual([{ rolsuper: false }]);
    } finally {
      await database.stop();
    }
  }, 240_000);
});
