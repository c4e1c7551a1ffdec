import os from 'node:os';

/** The process topology's settings, read from the environment in this one place. */
export interface TopologyConfig {
  /** Worker processes of the edge on its one public port (EDGE_WORKERS, default: the number of cores). */
  edgeWorkers: number;
  /** SINGLE_PROCESS=true runs the whole platform in one process, as the tests do (small machines, debugging). */
  singleProcess: boolean;
}

export function loadTopologyConfig(env: NodeJS.ProcessEnv = process.env): TopologyConfig {
  const raw = env.EDGE_WORKERS;
  const edgeWorkers = raw === undefined || raw === '' ? Math.max(1, os.availableParallelism()) : Number(raw);
  if (!Number.isSafeInteger(edgeWorkers) || edgeWorkers < 1 || edgeWorkers > 256) {
    throw new Error(`EDGE_WORKERS must be a whole number from 1 to 256, got "${raw}"`);
  }
  const single = env.SINGLE_PROCESS ?? '';
  if (!['', 'true', 'false'].includes(single)) throw new Error(`SINGLE_PROCESS must be true or false, got "${single}"`);
  return { edgeWorkers, singleProcess: single === 'true' };
}
