import type { Logger } from 'pino';
import { ensureDashboardBuilt } from '../dashboard/build.js';
import { inferenceConfigOf, loadConfig, SUBGRAPH_NAMES, type PlatformConfig } from './config.js';
import { openPlatformDatabase, portIsFree } from './database.js';
import { openIdentityStore } from '../identity/index.js';
import { createLogger } from '../core/logger.js';
import { stopOnSignal } from './service-entry.js';
import { stopWithParent } from './supervisor/child-protocol.js';
import { startSupervisedPlatform } from './supervisor/supervisor.js';
import { loadTopologyConfig } from './supervisor/supervisor-config.js';

/**
 * `npm start` (from dist/, after platform/supervisor/launch.mjs has built it) or `tsx platform/start.ts`:
 * the embedded database (unless DATABASE_URL) and the identity migrations once, then one
 * supervised process per subgraph and the edge's cluster; SINGLE_PROCESS=true runs it all here.
 */
let config = loadConfig();
let topology;
// Read before anything starts, so that a bad INFERENCE_CONFIG stops the start with every bad entry named.
try {
  config = { ...config, inference: inferenceConfigOf(config) };
  topology = loadTopologyConfig();
} catch (error) {
  process.stderr.write(`\n${error instanceof Error ? error.message : String(error)}\n\n`);
  process.exit(1);
}
const logger = createLogger(config.logLevel, topology.singleProcess ? 'platform' : 'supervisor');

function fail(message: string): never {
  process.stderr.write(`\n${message}\n\n`);
  process.exit(1);
}

// Refuse early, before touching the database, when a port we need is taken.
for (const [label, port] of [
  ['PORT (the gateway)', config.port],
  ...SUBGRAPH_NAMES.map((name) => [`${name.toUpperCase()}_PORT (the ${name} subgraph)`, config.subgraphPorts[name]] as const),
] as const) {
  if (port !== 0 && !(await portIsFree(port, label.startsWith('PORT') ? config.host : config.subgraphHost))) {
    fail(`Cannot start: port ${port} for ${label} is already in use. Is the platform already running? Set ${label.split(' ')[0]} to another port.`);
  }
}

// The dashboard's client (Vite), built when missing or older than its sources.
try {
  await ensureDashboardBuilt({ info: (message) => logger.info(message) });
} catch (error) {
  fail(`Cannot build the dashboard: ${error instanceof Error ? error.message : String(error)}`);
}

let database;
try {
  database = await openPlatformDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    embeddedPort: config.embeddedDatabasePort,
    logger,
  });
} catch (error) {
  fail(`Cannot start the database: ${error instanceof Error ? error.message : String(error)}`);
}

let platform;
try {
  // Loaded only when it runs here: it brings every subgraph's and the edge's code, which the
  // supervisor itself never needs (seconds of start).
  platform = topology.singleProcess
    ? await (await import('./platform.js')).startPlatform(config, database.url, logger)
    : await startSupervised(config, database.url, logger);
} catch (error) {
  await database.stop();
  fail(`Cannot start the platform: ${error instanceof Error ? error.message : String(error)}`);
}

const { baseUrl, graphqlUrl, subgraphUrls } = platform;
const processes = topology.singleProcess
  ? 'one (SINGLE_PROCESS=true)'
  : `one per subgraph, the edge with ${topology.edgeWorkers} worker${topology.edgeWorkers === 1 ? '' : 's'} (EDGE_WORKERS)`;
const counters = config.redisUrl ? 'Redis (REDIS_URL)' : topology.singleProcess ? 'in process' : "in the edge's primary process, shared by its workers";
process.stdout.write(
  [
    '',
    'Platform is up.',
    `  GraphQL                        ${graphqlUrl}`,
    `  Dashboard                      ${baseUrl}${config.dashboard.path}/   (first owner: npm run --silent cli -- users create-owner --account acme --email you@example.org, password on stdin)`,
    `  Membership REST                ${baseUrl}${config.restBases.membership}   (OpenAPI: ${baseUrl}${config.restBases.membership}/openapi.json)`,
    `  Traceroute REST                ${baseUrl}${config.restBases.traceroute}   (key in X-API-Key or ?api_key=)`,
    `  Inference (OpenAI-compatible)  ${baseUrl}${config.restBases.inferenceText}/v1, ${config.restBases.inferenceImage}/v1, ${config.restBases.inferenceProxy}/v1, ${config.restBases.inferenceGateway}/v1`,
    `  Models folder (GGUF)           ${config.inference!.modelsDir}`,
    `  Rate-limit counters            ${counters}`,
    `  Processes                      ${processes}`,
    `  Health                         ${baseUrl}/health`,
    ...SUBGRAPH_NAMES.map((name) => `  ${`${name} subgraph`.padEnd(31)}${subgraphUrls[name]} (internal)`),
    `  Database                       ${database.embedded ? `embedded PostgreSQL in ${config.dataDir}/postgres` : 'DATABASE_URL'}`,
    '',
    'Make a key:  npm run --silent cli -- keys create --kind live --account acme',
    'Stop:        Ctrl-C',
    '',
  ].join('\n'),
);

// The services first, the database last.
stopOnSignal(logger, async () => {
  await platform!.stop();
  await database!.stop();
});
// Started by npm start's launcher (launch.mjs), stop with it however it ends.
if (process.send) stopWithParent();

/** The identity schema is migrated here once, so the edge's workers and the subgraphs find it ready rather than queue on its lock. */
async function startSupervised(config: PlatformConfig, databaseUrl: string, logger: Logger) {
  const identityOrm = await openIdentityStore(databaseUrl, logger.child({ service: 'identity' }), 1);
  await identityOrm.close();
  return startSupervisedPlatform(config, databaseUrl, logger);
}
