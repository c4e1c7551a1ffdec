import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { loadConfig } from '../platform/config.js';
import { openSharedDatabase } from '../platform/shared-database.js';
import { DomainError } from '../core/errors.js';
import { migrate, openOrm } from '../core/orm.js';
import { sharedIpEnricher } from '../subgraphs/traceroute/enrichment/ip-enricher.js';
import { readFileRecords } from '../subgraphs/traceroute/ingest/record-reader.js';
import { SyntheticTraceGenerator } from '../subgraphs/traceroute/ingest/synthetic-generator.js';
import { TraceImporter } from '../subgraphs/traceroute/ingest/trace-importer.js';
import { tracerouteOrmOptions } from '../subgraphs/traceroute/mikro-orm.config.js';
import { defineCommand, positiveInteger, type Command } from './args.js';
import { IncompleteResult } from './incomplete-result.js';
import { ProgressBar } from './progress-bar.js';
import { UsageError } from './usage.error.js';

/** Opens the traceroute schema of the platform's database (migrating it), runs `work`, closes it. */
async function withTraceroute<T>(work: (importer: TraceImporter) => Promise<T>): Promise<T> {
  const database = await openSharedDatabase(loadConfig());
  try {
    const orm = await openOrm({ clientUrl: database.url, ...tracerouteOrmOptions, poolMax: 2 });
    try {
      await migrate(orm, database.url, tracerouteOrmOptions.schema);
      return await work(new TraceImporter(orm.em.fork(), await sharedIpEnricher()));
    } finally {
      await orm.close(true);
    }
  } finally {
    await database.stop();
  }
}

/** Whether a file holds nothing but white space (an empty import is no failure). */
async function blank(file: string): Promise<boolean> {
  for await (const chunk of createReadStream(file, { encoding: 'utf8' })) if (/\S/.test(chunk as string)) return false;
  return true;
}

/**
 * `traceroute import FILE...`: takes any number of files, so it parses its own positionals. Exits
 * 1 (with its report) when a file that is not empty gave no trace to the store.
 */
const importCommand: Command = {
  words: ['traceroute', 'import'],
  usage: 'traceroute import <file>...  (RIPE Atlas: JSON array, JSON lines or {results: [...]}; scamper2 JSON lines)',
  prepare(args) {
    if (!args.length || args.some((a) => a.startsWith('-') && a !== '-')) throw new UsageError('"traceroute import" takes <file>...');
    return async () => {
      for (const file of args) {
        const info = await stat(file).catch(() => null);
        if (!info?.isFile()) throw new DomainError('BAD_USER_INPUT', `${file} is not a readable file`, { param: 'file' });
      }
      return withTraceroute(async (importer) => {
        const files = [];
        const failed: string[] = [];
        for (const file of args) {
          const size = (await stat(file)).size || 1;
          const progress = { bytes: 0 };
          const bar = new ProgressBar(file);
          const report = await importer.run(readFileRecords(file, progress), (r) => bar.update(progress.bytes / size, r));
          bar.update(1, report, true);
          bar.done();
          files.push({ file, ...report });
          // Traces stored before are in the store all the same; a file none of whose traces is there failed.
          if (report.stored + report.duplicates === 0 && (report.read > 0 || !(await blank(file)))) {
            failed.push(`nothing was stored from ${file} (${report.read} records read, ${report.skipped.length} skipped${report.skipped[0] ? `; ${report.skipped[0].position}: ${report.skipped[0].reason}` : ''})`);
          }
        }
        const result = {
          read: files.reduce((n, f) => n + f.read, 0),
          stored: files.reduce((n, f) => n + f.stored, 0),
          duplicates: files.reduce((n, f) => n + f.duplicates, 0),
          skipped: files.reduce((n, f) => n + f.skipped.length, 0),
          files,
        };
        return failed.length ? new IncompleteResult(result, failed.join('; ')) : result;
      });
    };
  },
};

const generate = defineCommand({
  words: ['traceroute', 'generate'],
  usage: 'traceroute generate --count <n> [--days <n> (default 7)] [--seed <n>]',
  options: { count: { type: 'string' }, days: { type: 'string' }, seed: { type: 'string' } },
  parse: (values) => {
    if (values.count === undefined) throw new UsageError('--count is required');
    return {
      count: positiveInteger(values.count, '--count'),
      days: values.days === undefined ? 7 : positiveInteger(values.days, '--days'),
      seed: values.seed === undefined ? Date.now() % 2 ** 31 : positiveInteger(values.seed, '--seed'),
    };
  },
  run: ({}, input) =>
    withTraceroute(async (importer) => {
      const generator = new SyntheticTraceGenerator(await sharedIpEnricher(), input.seed);
      const bar = new ProgressBar('generate');
      const report = await importer.store(generator.generate(input.count, { days: input.days }), undefined, (r) => bar.update(r.read / input.count, r));
      bar.update(1, report, true);
      bar.done();
      return { generated: input.count, stored: report.stored, duplicates: report.duplicates, seed: input.seed };
    }),
});

/** The traceroute data commands: import measurement files, generate synthetic traces. */
export const TRACEROUTE_COMMANDS: Command[] = [importCommand, generate];
