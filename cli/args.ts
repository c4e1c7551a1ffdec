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
  /** A listing (its result is an array of rows): it takes `--format json|table`. */
  listing?: boolean;
}

/** How a command's result is printed: JSON (default, for `| jq`) or, for listings, an aligned table. */
export type OutputFormat = 'json' | 'table';
const OUTPUT_FORMATS: readonly OutputFormat[] = ['json', 'table'];

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
  listing?: boolean;
}): Command {
  return {
    words: spec.words,
    usage: spec.usage,
    listing: spec.listing,
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

/**
 * Help (on stdout with exit 0 when asked for, on stderr with exit 2 when nothing was asked) about
 * the commands under `topic` (`['keys']`: the keys commands), or a command ready to run.
 */
export type Invocation = { kind: 'help'; exitCode: 0 | 2; topic: readonly string[] } | { kind: 'run'; action: CommandAction; format: OutputFormat };

/** The words before the first flag: the command or group named. */
function leadingWords(argv: readonly string[]): string[] {
  const end = argv.findIndex((word) => word.startsWith('-'));
  return [...(end === -1 ? argv : argv.slice(0, end))];
}

/** Whether `prefix` names a group of commands (`keys`), or a command, without any other word. */
function namesGroup(prefix: readonly string[], commands: readonly Command[]): boolean {
  return prefix.length > 0 && commands.some((command) => prefix.every((word, index) => command.words[index] === word));
}

/** Takes `--format json|table` (or `--format=...`) out of a listing command's arguments. */
function takeFormat(args: string[]): { args: string[]; format: OutputFormat } {
  let format: string = 'json';
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (args[i] === '--format') {
      if (i + 1 >= args.length || args[i + 1].startsWith('-')) throw new UsageError(`--format takes one of ${OUTPUT_FORMATS.join(', ')}`);
      format = args[++i];
    } else if (args[i].startsWith('--format=')) format = args[i].slice('--format='.length);
    else rest.push(args[i]);
  }
  if (!(OUTPUT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}, got "${format}"`);
  return { args: rest, format: format as OutputFormat };
}

/** Picks the command named by the first words of `argv` and parses the rest of it. */
export function parseCommandLine(argv: readonly string[], commands: readonly Command[]): Invocation {
  if (argv.length === 0) return { kind: 'help', exitCode: 2, topic: [] };
  const beforeTerminator = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  if (argv[0] === 'help') return { kind: 'help', exitCode: 0, topic: leadingWords(argv.slice(1)) };
  if (beforeTerminator.includes('--help') || beforeTerminator.includes('-h')) return { kind: 'help', exitCode: 0, topic: leadingWords(argv) };
  const command = commands.find((candidate) => candidate.words.every((word, index) => argv[index] === word));
  if (!command) {
    // A group alone (`keys`) lists its commands.
    if (argv.every((word) => !word.startsWith('-')) && namesGroup(argv, commands)) {
      return { kind: 'help', exitCode: 0, topic: [...argv] };
    }
    const words = argv.slice(0, 2).filter((word) => !word.startsWith('-'));
    throw new UsageError(`unknown command "${words.join(' ')}"`);
  }
  const own = argv.slice(command.words.length);
  const { args, format } = command.listing ? takeFormat(own) : { args: own, format: 'json' as const };
  return { kind: 'run', action: command.prepare(args), format };
}

/** The usage of the commands under `topic` (all of them when it names none). */
export function usageText(commands: readonly Command[], topic: readonly string[] = []): string {
  const under = commands.filter((command) => topic.every((word, index) => command.words[index] === word));
  const shown = under.length ? under : commands;
  return [
    'Usage:',
    ...shown.map((command) => `  ${PROGRAM} ${command.usage}`),
    `  ${PROGRAM} help [<command>]`,
    '',
    'Uses DATABASE_URL when set, otherwise the embedded PostgreSQL under DATA_DIR (default ./.data),',
    'started for the command when the platform is not running. Results are JSON on stdout',
    '(`--format table` for listings). Help goes to stdout; errors to stderr.',
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
