import { AccountUserService } from '../identity/account-user.service.js';
import { defineCommand, required, type Command } from './args.js';
import { UsageError } from './usage.error.js';

/** The password from stdin's first line, for `--password` not to show in the shell's history or `ps`. */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('pipe the password on stdin (e.g. `read -s PW; echo "$PW" | ...`), or pass --password');
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  const line = text.split(/\r?\n/)[0] ?? '';
  if (!line) throw new UsageError('no password on stdin: pipe it in, or pass --password');
  return line;
}

const createOwner = defineCommand({
  words: ['users', 'create-owner'],
  usage: 'users create-owner --account <name> --email <email> [--name <name>] [--platform-admin] [--password <password>]   (password on stdin unless --password)',
  options: {
    account: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    password: { type: 'string' },
    'platform-admin': { type: 'boolean' },
  },
  parse: (values) => ({
    account: required(values.account, '--account'),
    email: required(values.email, '--email'),
    name: values.name,
    password: values.password,
    platformAdmin: values['platform-admin'] ?? false,
  }),
  run: async (_identity, input, em) => {
    const password = input.password ?? (await passwordFromStdin());
    const { user, account } = await new AccountUserService(em).createOwner({ ...input, password });
    return { user, account: { id: account.id, name: account.slug } };
  },
});

/** Dashboard users: an account's first owner (owners invite the others from the dashboard). */
export const USERS_COMMANDS: Command[] = [createOwner];
