import { DomainError } from '../core/errors.js';
import { loadInferenceConfig } from '../subgraphs/inference/config/load-inference-config.js';
import { KEY_KINDS, PLAN_KEY_KINDS, type KeyKind } from '../core/principal.js';
import { defineCommand, isoDate, positiveInteger, required, type Command } from './args.js';

// Checked here as well as in IdentityService, so that a typo fails before any database is opened.
function keyKind(value: string): KeyKind {
  if (!(KEY_KINDS as readonly string[]).includes(value)) {
    throw new DomainError('BAD_USER_INPUT', `--kind must be one of ${KEY_KINDS.join(', ')}, got "${value}"`, {
      param: 'kind',
    });
  }
  return value as KeyKind;
}

function futureDate(value: string, flag: string, now = new Date()): Date {
  const date = isoDate(value, flag);
  // A key born expired would print a secret that never works.
  if (date <= now) {
    throw new DomainError('BAD_USER_INPUT', `${flag} must be in the future, got "${value}"`, {
      param: flag.replace(/^--/, ''),
    });
  }
  return date;
}

/**
 * The plan ids of the inference configuration (INFERENCE_CONFIG, else the built-in defaults) if
 * `plan` is one of them; read only when a plan is named, so a broken file stops no other command.
 */
function knownPlan(plan: string): readonly string[] {
  const knownPlans = loadInferenceConfig(process.env).plans.map((entry) => entry.id);
  if (!knownPlans.includes(plan)) {
    throw new DomainError('BAD_USER_INPUT', `unknown plan "${plan}": the inference configuration's plans are ${knownPlans.join(', ')}`, {
      param: 'plan',
    });
  }
  return knownPlans;
}

function planFlag(kind: KeyKind, plan: string | undefined): { plan: string | null; knownPlans?: readonly string[] } {
  if (plan === undefined) return { plan: null };
  if (!PLAN_KEY_KINDS.includes(kind)) {
    throw new DomainError('BAD_USER_INPUT', `--plan is for ${PLAN_KEY_KINDS.join(' and ')} keys only, not ${kind} keys`, { param: 'plan' });
  }
  return { plan, knownPlans: knownPlan(plan) };
}

const createKey = defineCommand({
  words: ['keys', 'create'],
  usage:
    `keys create --kind <${KEY_KINDS.join('|')}> --account <slug> [--name <label>] [--expires-at <ISO date>]` +
    ' [--hourly <n> --daily <n>  (traceroute keys; default 100 and 2000)]' +
    " [--plan <plan>  (text and image keys; a plan of the inference configuration, INFERENCE_CONFIG; default its defaultPlan)]" +
    '  (an account holds at most MAX_ACTIVE_KEYS_PER_ACCOUNT active live and test keys, default 20)',
  options: {
    kind: { type: 'string' },
    account: { type: 'string' },
    name: { type: 'string' },
    'expires-at': { type: 'string' },
    hourly: { type: 'string' },
    daily: { type: 'string' },
    plan: { type: 'string' },
  },
  parse: (values) => {
    const kind = keyKind(required(values.kind, '--kind'));
    return {
      kind,
      account: required(values.account, '--account'),
      name: values.name ?? null,
      expiresAt: values['expires-at'] === undefined ? null : futureDate(values['expires-at'], '--expires-at'),
      hourlyLimit: values.hourly === undefined ? null : positiveInteger(values.hourly, '--hourly'),
      dailyLimit: values.daily === undefined ? null : positiveInteger(values.daily, '--daily'),
      ...planFlag(kind, values.plan),
    };
  },
  run: (identity, input) => identity.createKey(input),
});

const listKeys = defineCommand({
  words: ['keys', 'list'],
  usage: 'keys list [--account <slug>] [--kind <kind>] [--format json|table]  (a text or image key with plan null is on the defaultPlan)',
  listing: true,
  options: { account: { type: 'string' }, kind: { type: 'string' } },
  parse: (values) => ({ account: values.account, kind: values.kind === undefined ? undefined : keyKind(values.kind) }),
  run: (identity, input) => identity.listKeys(input),
});

const enableKey = defineCommand({
  words: ['keys', 'enable'],
  usage: 'keys enable <id>  (a live or test key counts against MAX_ACTIVE_KEYS_PER_ACCOUNT again)',
  options: {},
  positionals: ['id'],
  parse: (_values, [id]) => ({ id }),
  run: (identity, input) => identity.enableKey(input.id),
});

const expireKey = defineCommand({
  words: ['keys', 'expire'],
  usage: 'keys expire <id> [--at <ISO date>]  (now by default; a later date on an expired live or test key counts against the cap again)',
  options: { at: { type: 'string' } },
  positionals: ['id'],
  parse: (values, [id]) => ({ id, at: values.at === undefined ? new Date() : isoDate(values.at, '--at') }),
  run: (identity, input) => identity.expireKey(input.id, input.at),
});

const setKeyPlan = defineCommand({
  words: ['keys', 'plan'],
  usage: "keys plan <id> <plan>  (moves a text or image key to another plan of the inference configuration)",
  options: {},
  positionals: ['id', 'plan'],
  parse: (_values, [id, plan]) => ({ id, plan, knownPlans: knownPlan(plan) }),
  run: (identity, input) => identity.setKeyPlan(input.id, input.plan, { knownPlans: input.knownPlans }),
});

const disableKey = defineCommand({
  words: ['keys', 'disable'],
  usage: 'keys disable <id>',
  options: {},
  positionals: ['id'],
  parse: (_values, [id]) => ({ id }),
  run: (identity, input) => identity.disableKey(input.id),
});

/** `keys create|list|plan|disable|enable|expire`: API keys of any kind, for any account, without the edge. */
export const KEYS_COMMANDS: readonly Command[] = [createKey, listKeys, setKeyPlan, disableKey, enableKey, expireKey];
