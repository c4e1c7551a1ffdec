import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node loads graphql 16's CommonJS build for every dependency (it has no "exports" map);
    // Vite would pick its .mjs build for our files, and two copies of graphql cannot mix.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Every property test prints its seed and replays with FC_SEED=<seed>.
    setupFiles: ['test/support/fast-check-seed.ts'],
    // Each file gets its own database, so files run in parallel; tests within a file run in order.
    fileParallelism: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: 'test' },
  },
});
