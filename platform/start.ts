import { inferenceConfigOf, loadConfig, SUBGRAPH_NAMES } from './config.js';
import { openPlatformDatabase, portIsFree } from './database.js';
import { createLogger } from './logger.js';
import { startPlatform } from './platform.js';
import { stopOnSignal } from './service-entry.js';

/** `npm start`: the embedded database (unless DATABASE_URL), every subgraph, the gateway and the bridge. */
let config = loadConfig();
// Read before anything starts, so that a bad INFERENCE_CONFIG stops the start with every bad entry named.
try {
  config = { ...config, inference: inferenceConfigOf(config) };
} catch (error) {
  process.stderr.write(`\n${error instanceof Error ? error.message : String(error)}\n\n`);
  process.exit(1);
}
const logger = createLogger(config.logLevel);

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
  platform = await startPlatform(config, database.url, logger);
} catch (error) {
  await database.stop();
  fail(`Cannot start the platform: ${error instanceof Error ? error.message : String(error)}`);
}

const { baseUrl, graphqlUrl, subgraphUrls } = platform;
process.stdout.write(
  [
    '',
    'Platform is up.',
    `  GraphQL                        ${graphqlUrl}`,
    `  Membership REST                ${baseUrl}${config.restBases.membership}   (OpenAPI: ${baseUrl}${config.restBases.membership}/openapi.json)`,
    `  Traceroute REST                ${baseUrl}${config.restBases.traceroute}   (key in X-API-Key or ?api_key=)`,
    `  Inference (OpenAI-compatible)  ${baseUrl}${config.restBases.inferenceText}/v1, ${config.restBases.inferenceImage}/v1, ${config.restBases.inferenceProxy}/v1, ${config.restBases.inferenceGateway}/v1`,
    `  Models folder (GGUF)           ${config.inference!.modelsDir}`,
    `  Rate-limit counters            ${config.redisUrl ? 'Redis (REDIS_URL)' : 'in process'}`,
    `  Health                         ${baseUrl}/health`,
    ...SUBGRAPH_NAMES.map((name) => `  ${`${name} subgraph`.padEnd(31)}${subgraphUrls[name]} (internal)`),
    `  Database                       ${database.embedded ? `embedded PostgreSQL in ${config.dataDir}/postgres` : 'DATABASE_URL'}`,
    '',
    'Make a key:  npm run --silent cli -- keys create --kind live --account acme',
    'Stop:        Ctrl-C',
    '',
  ].join('\n'),
);

stopOnSignal(logger, async () => {
  await platform!.stop();
  await database!.stop();
});
