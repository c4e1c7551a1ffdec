import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../platform/database.js';
import { freePort } from './free-port.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL server URL on which each test file creates its own database. */
    postgresServerUrl: string;
  }
}

/** Starts one embedded PostgreSQL for the run, unless DATABASE_URL names a server to use. */
export default async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide('postgresServerUrl', process.env.DATABASE_URL);
    return;
  }
  // The parent must be traversable by the unprivileged user PostgreSQL runs as under root.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'platform-test-pg-'));
  const server = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port: await freePort() });
  project.provide('postgresServerUrl', server.serverUrl);
  return async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
