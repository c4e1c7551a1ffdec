import { loadConfig } from '../platform/config.js';
import { IdentityService } from '../identity/identity.service.js';
import { openIdentityStore } from '../identity/index.js';
import { parseCommandLine, usageText, type CommandAction } from './args.js';
import { openSharedDatabase } from '../platform/shared-database.js';
import { IncompleteResult } from './incomplete-result.js';
import { formatTable } from './table-format.js';
import { KEYS_COMMANDS } from './keys.command.js';
import { TRACEROUTE_COMMANDS } from './traceroute.command.js';
import { USERS_COMMANDS } from './users.command.js';
import { UsageError } from './usage.error.js';

const COMMANDS = [...KEYS_COMMANDS, ...TRACEROUTE_COMMANDS, ...USERS_COMMANDS];

export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Opens the database and the identity store, runs one action, and closes both whatever happens. */
async function withIdentity(action: CommandAction): Promise<unknown> {
  const config = loadConfig();
  const database = await openSharedDatabase(config);
  try {
    const orm = await openIdentityStore(database.url, undefined, 2);
    try {
      const em = orm.em.fork();
      return await action(new IdentityService(em, { maxActiveKeysPerAccount: config.maxActiveKeysPerAccount }), em);
    } finally {
      await orm.close(true);
    }
  } finally {
    await database.stop();
  }
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * Runs one command line. Only help asked for and a command that ran write to stdout (the usage;
 * the command's result, JSON or with `--format table` a table);
 * returns the exit code: 0 done, 1 failed (a one-line `error:` on stderr; a command that ran but
 * failed in part, an IncompleteResult, prints its result too), 2 bad command line.
 */
export async function runCli(argv: readonly string[], output: CliOutput): Promise<number> {
  try {
    const invocation = parseCommandLine(argv, COMMANDS);
    if (invocation.kind === 'help') {
      // Asked for, help is the output; a bare command line is an error that shows it.
      (invocation.exitCode === 0 ? output.stdout : output.stderr)(usageText(COMMANDS, invocation.topic));
      return invocation.exitCode;
    }
    const print = (result: unknown) =>
      invocation.format === 'table' && Array.isArray(result) ? formatTable(result as Record<string, unknown>[]) : JSON.stringify(result, null, 2) + '\n';
    const result = await withIdentity(invocation.action);
    if (result instanceof IncompleteResult) {
      output.stdout(print(result.result));
      output.stderr(`error: ${oneLine(result.message)}\n`);
      return 1;
    }
    output.stdout(print(result));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      output.stderr(`error: ${oneLine(error)}\n\n${usageText(COMMANDS)}`);
      return 2;
    }
    output.stderr(`error: ${oneLine(error)}\n`);
    return 1;
  }
}
