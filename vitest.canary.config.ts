import { defineConfig } from 'vitest/config';
import suite from './vitest.config.js';

/** The suite's own configuration and global setup, running only the deliberately failing canary. */
export default defineConfig({ ...suite, test: { ...suite.test, include: ['test/canary/*.canary.ts'] } });
