import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { DomainError } from '../core/errors.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IdentityService } from '../identity/identity.service.js';
import { UsageError } from './usage.error.js';

export const PROGRAM = 'npm run --silent cli --';

/** What a parsed command does once the database is open (the key store, and its EntityManager for other identity work); the result is printed as JSON. */
export type CommandAction = (identity: IdentityService, em: EntityManager) => Promise<unknown>;

export interface Command {
  /** The words that select the command, e.g. `['keys', 'create']`. */
  words: readonly string[];
  /** The command's usage line, without the program name. */
  usage: string;
  /** Parses the command's own arguments; runs before any database is opened. */
  prepare(args: string[]): CommandAction;
}

type Values<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ options: O; strict: true; allowPositionals: true }>
>['values'];

/**
 * Declares a command: its flags (node:util parseArgs, strict), the positionals it requires, how
 * they become the command's input, and what it runs with that input.
 */
export function defineCommand<const O extends ParseArgsOptionsConfig, I>(spec: {
  words: readonly string[];
  usage: string;
  options: O;
  positionals?: readonly string[];
  parse(values: Values<O>, positionals: string[]): I;
  run(identity: IdentityService, input: I, em: EntityManager): Promise<unknown>;
}): Command {
  return {
    words: spec.words,
    usage: spec.usage,
    prepare(args) {
      let parsed: { values: Values<O>; positionals: string[] };
      try {
        parsed = parseArgs({ args, options: spec.options, strict: true, allowPositionals: true }) as typeof parsed;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code?.startsWith('ERR_PARSE_ARGS_')) throw new UsageError((error as Error).message);
        throw error;
      }
      const expected = spec.positionals ?? [];
      if (parsed.positionals.length !== expected.length) {
        throw new UsageError(
          expected.length === 0
            ? `"${spec.words.join(' ')}" takes no positional arguments`
            : `"${spec.words.join(' ')}" takes ${expected.map((name) => `<${name}>`).join(' ')}`,
        );
      }
      const input = spec.parse(parsed.values, parsed.positionals);
      return (identity, em) => spec.run(identity, input, em);
    },
  };
}

export type Invocation = { kind: 'help'; exitCode: 0 | 2 } | { kind: 'run'; action: CommandAction };

/** Picks the command named by the first words of `argv` and parses the rest of it. */
export function parseCommandLine(argv: readonly string[], commands: readonly Command[]): Invocation {
  if (argv.length === 0) return { kind: 'help', exitCode: 2 };
  const beforeTerminator = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  if (argv[0] === 'help' || beforeTerminator.includes('--help') || beforeTerminator.includes('-h')) {
    return { kind: 'help', exitCode: 0 };
  }
  const command = commands.find((candidate) => candidate.words.every((word, index) => argv[index] === word));
  if (!command) {
    const words = argv.slice(0, 2).filter((word) => !word.startsWith('-'));
    throw new UsageError(`unknown command "${words.join(' ')}"`);
  }
  return { kind: 'run', action: command.prepare(argv.slice(command.words.length)) };
}

export function usageText(commands: readonly Command[]): string {
  return [
    'Usage:',
    ...commands.map((command) => `  ${PROGRAM} ${command.usage}`),
    `  ${PROGRAM} help`,
    '',
    'Uses DATABASE_URL when set, otherwise the embedded PostgreSQL under DATA_DIR (default ./.data),',
    'started for the command when the platform is not running. Results are JSON on stdout.',
    '',
  ].join('\n');
}

/** The value of a flag the command cannot do without. */
export function required(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`${flag} is required`);
  return value;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An ISO 8601 date (`2027-01-31`, midnight UTC) or date-time (`2027-01-31T12:00:00Z`; local time
 * without an offset). Date's own parser accepts free text and rolls Feb 30 over to March: not here.
 */
export function isoDate(value: string, flag: string): Date {
  const match = ISO_DATE.exec(value.trim());
  const invalid = new DomainError(
    'BAD_USER_INPUT',
    `${flag} must be an ISO 8601 date such as 2027-01-31 or 2027-01-31T12:00:00Z, got "${value}"`,
    { param: flag.replace(/^--/, '') },
  );
  if (!match) throw invalid;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const outOfRange = month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59;
  if (outOfRange) throw invalid;
  const date = new Date(value.trim());
  if (Number.isNaN(date.getTime())) throw invalid;
  return date;
}

/** A whole number of at least 1, such as a per-key request limit. */
export function positiveInteger(value: string, flag: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < 1) {
    throw new DomainError('BAD_USER_INPUT', `${flag} must be a whole number of at least 1, got "${value}"`, {
      param: flag.replace(/^--/, ''),
    });
  }
  return number;
}
