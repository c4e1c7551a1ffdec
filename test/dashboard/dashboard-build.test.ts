import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDashboardBuilt } from '../../dashboard/build.js';

/**
 * The dashboard's build runs inside `npm start`'s supervisor on a fresh machine, which then hands
 * its environment to every service. A small app of the same shape (index.html, src/,
 * vite.config.ts) is built here, so the real dashboard/dist other tests serve is left alone.
 */
let root: string;
let savedNodeEnv: string | undefined;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'dashboard-build-'));
  await mkdir(path.join(root, 'src'));
  await writeFile(path.join(root, 'index.html'), '<!doctype html><title>t</title><script type="module" src="./src/main.js"></script>\n');
  await writeFile(path.join(root, 'src', 'main.js'), "document.title = process.env.NODE_ENV === 'production' ? 'built' : 'dev';\n");
  await writeFile(
    path.join(root, 'vite.config.ts'),
    "import path from 'node:path';\nconst root = import.meta.dirname;\nexport default { root, base: './', build: { outDir: path.join(root, 'dist'), emptyOutDir: true } };\n",
  );
  savedNodeEnv = process.env.NODE_ENV;
});

afterAll(async () => {
  if (savedNodeEnv === undefined) delete process.env.NODE_ENV;
  else process.env.NODE_ENV = savedNodeEnv;
  await rm(root, { recursive: true, force: true });
});

describe('ensureDashboardBuilt', () => {
  it("builds a stale dashboard without changing the caller's environment (NODE_ENV stays unset)", async () => {
    // As under `npm start`: nothing sets NODE_ENV, and introspection follows it in every service started next.
    delete process.env.NODE_ENV;
    const before = { ...process.env };
    await ensureDashboardBuilt(undefined, root);
    expect(process.env.NODE_ENV).toBeUndefined();
    expect(process.env).toEqual(before);
    // It did build, as production: the bundle replaced process.env.NODE_ENV with "production".
    const assets = path.join(root, 'dist', 'assets');
    const bundle = (await Promise.all((await readdir(assets)).map((file) => readFile(path.join(assets, file), 'utf8')))).join('');
    expect(bundle).toMatch(/title=["'`]built["'`]/);
    expect(bundle).not.toMatch(/["'`]dev["'`]/);
  });

  it('reports a failing build with the output of Vite', async () => {
    await writeFile(path.join(root, 'src', 'main.js'), 'this is not javascript (\n');
    await expect(ensureDashboardBuilt(undefined, root)).rejects.toThrow(/main\.js/);
  });
});
