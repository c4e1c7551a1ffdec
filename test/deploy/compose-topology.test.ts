import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { PROJECT_ROOT, spawnService } from '../support/service-process.js';

// Builds the image and runs deploy/compose.yaml where a container engine answers (docker, or podman
// with its compose); elsewhere it is skipped, saying why. deploy-definitions.test.ts always runs.

/** The engine that answers here, or why none does. */
function findEngine(): { engine?: string; missing?: string } {
  const reasons: string[] = [];
  for (const engine of ['docker', 'podman']) {
    const info = spawnSync(engine, ['info'], { encoding: 'utf8', timeout: 20_000 });
    if (info.error) {
      reasons.push(`${engine}: not installed`);
      continue;
    }
    if (info.status !== 0) {
      reasons.push(`${engine}: no engine answers (${(info.stderr || info.stdout).trim().split('\n').at(-1)})`);
      continue;
    }
    const compose = spawnSync(engine, ['compose', 'version'], { encoding: 'utf8', timeout: 20_000 });
    if (compose.status !== 0) {
      reasons.push(`${engine}: no compose`);
      continue;
    }
    return { engine };
  }
  return { missing: reasons.join('; ') };
}

const { engine, missing } = findEngine();
const PROJECT = 'federated-platform-test';
const IMAGE = 'federated-platform:test';

/** Runs the engine to completion, failing with its output. */
function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const child = spawnService(engine!, args, env);
  return child.exited.then((code) => {
    if (code !== 0) throw new Error(`${engine} ${args.join(' ')} exited ${code}:\n${child.output()}`);
    return child.output();
  });
}

describe.skipIf(!engine)(`the image and the compose topology in a container engine${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let publicPort: number;
  let env: NodeJS.ProcessEnv;
  const compose = (...args: string[]) => run(['compose', '-f', 'deploy/compose.yaml', '-p', PROJECT, ...args], env);

  beforeAll(async () => {
    publicPort = await freePort();
    env = {
      ...process.env,
      PLATFORM_IMAGE: IMAGE,
      PUBLIC_PORT: String(publicPort),
      POSTGRES_PASSWORD: 'compose-test-password',
      INTERNAL_SECRET: 'compose-test-internal-secret-of-32-chars',
    };
    await run(['build', '-t', IMAGE, PROJECT_ROOT]);
    // --wait returns once every service is healthy (migrate: exited 0), or fails naming the one that is not.
    await compose('up', '-d', '--wait', '--no-build');
  }, 1_800_000);

  afterAll(async () => {
    await compose('down', '-v').catch(() => {});
  }, 300_000);

  it('runs the migration once, two edges and the four subgraphs, ready through the one public port', async () => {
    const migrate = await compose('ps', '-a', 'migrate', '--format', '{{.State}} {{.ExitCode}}');
    expect(migrate.trim()).toMatch(/^exited 0$/);
    const edges = (await compose('ps', 'edge', '--format', '{{.Name}}')).trim().split('\n');
    expect(edges).toHaveLength(2);
    const ready = await fetch(`http://127.0.0.1:${publicPort}/readyz`);
    expect(ready.status).toBe(200);
    const graphql = await fetch(`http://127.0.0.1:${publicPort}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(graphql.status).toBeLessThan(500);
  });

  it('runs as a user that is not root', async () => {
    const user = await run(['run', '--rm', '--entrypoint', 'id', IMAGE, '-u']);
    expect(user.trim()).not.toBe('0');
  });
});
