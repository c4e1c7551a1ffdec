import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = path.dirname(fileURLToPath(import.meta.url));

/** The dashboard's build: served by the edge under DASHBOARD_PATH, so every URL in it is relative. */
export default defineConfig({
  root,
  // Relative asset URLs: the edge may mount the app anywhere (DASHBOARD_PATH), and one build serves them all.
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic' } },
  worker: { format: 'es' },
  build: {
    outDir: path.join(root, 'dist'),
    emptyOutDir: true,
    // GraphiQL with Monaco is large by nature; it is loaded only on its own page.
    chunkSizeWarningLimit: 6000,
    sourcemap: false,
    rolldownOptions: {
      onwarn(warning, warn) {
        // Radix and framer-motion (under GraphiQL) mark modules "use client", which means nothing to a browser bundle.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
});
