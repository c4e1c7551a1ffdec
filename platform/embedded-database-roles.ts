import pg from 'pg';
import type { Logger } from 'pino';

/**
 * The role the services connect to the embedded PostgreSQL as: it owns the platform database and
 * every schema in it, and nothing else. Not a superuser: it cannot make roles or databases, nor
 * connect to any other database of the server.
 */
export const SERVICE_ROLE = 'platform_service';

/** The superuser's password in data directories made when it was fixed. */
const FORMER_PASSWORD = 'platform';
/** SQLSTATE invalid_password: the server refused the password. */
const INVALID_PASSWORD = '28P01';

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  // A server going away mid-session emits 'error' on the client; the awaited call reports it.
  client.on('error', () => {});
  await client.connect();
  return client;
}

const refused = (error: unknown) => (error as { code?: string }).code === INVALID_PASSWORD;

/**
 * Makes sure the superuser's password is the one `serverUrl` carries: a data directory made with
 * the former fixed password is moved to it. Throws when the server takes neither.
 */
export async function adoptSuperuserPassword(serverUrl: string, logger: Logger): Promise<void> {
  try {
    await (await connect(serverUrl)).end();
    return;
  } catch (error) {
    if (!refused(error)) throw error;
  }
  const former = new URL(serverUrl);
  former.password = FORMER_PASSWORD;
  const client = await connect(former.toString()).catch((error: unknown) => {
    throw refused(error)
      ? new Error("The embedded PostgreSQL refuses its superuser's password (kept beside its data directory, in postgres-superuser-password): was the file replaced?")
      : error;
  });
  try {
    await client.query(`alter role current_user password ${client.escapeLiteral(decodeURIComponent(new URL(serverUrl).password))}`);
  } finally {
    await client.end();
  }
  logger.info("the embedded PostgreSQL's superuser had the former fixed password; it now has the one generated under DATA_DIR");
}

/**
 * Gives the services their role (`url`'s user and password) on the server behind the
 * superuser's `serverUrl`: the role made or brought back to a plain login role with that
 * password, the owner of `database` (made if missing), which no other role may connect to, and
 * the owner of every schema in it and what they hold: the superuser's, in directories made before
 * this role existed. Every other database is closed to the role.
 */
export async function provisionServiceRole(serverUrl: string, options: { url: string; database: string }): Promise<void> {
  const target = new URL(options.url);
  const role = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const admin = await connect(serverUrl);
  try {
    const roleName = admin.escapeIdentifier(role);
    const database = admin.escapeIdentifier(options.database);
    const attributes = `login nosuperuser nocreatedb nocreaterole noreplication nobypassrls password ${admin.escapeLiteral(password)}`;
    const roleExists = (await admin.query('select 1 from pg_roles where rolname = $1', [role])).rowCount !== 0;
    await admin.query(roleExists ? `alter role ${roleName} with ${attributes}` : `create role ${roleName} with ${attributes}`);
    const databaseExists = (await admin.query('select 1 from pg_database where datname = $1', [options.database])).rowCount !== 0;
    await admin.query(databaseExists ? `alter database ${database} owner to ${roleName}` : `create database ${database} owner ${roleName}`);
    await admin.query(`revoke all on database ${database} from public`);
    const others = await admin.query<{ datname: string }>('select datname from pg_database where datname <> $1', [options.database]);
    for (const { datname } of others.rows) await admin.query(`revoke connect, temporary on database ${admin.escapeIdentifier(datname)} from public`);
  } finally {
    await admin.end();
  }
  const inDatabase = new URL(serverUrl);
  inDatabase.pathname = `/${options.database}`;
  const owner = await connect(inDatabase.toString());
  try {
    await owner.query(transferOwnership(owner.escapeLiteral(role)));
  } finally {
    await owner.end();
  }
}

/**
 * One statement that hands the superuser's schemas in the current database to `role` (a quoted
 * literal), with their tables, views, sequences, functions and types. Sequences of a column move
 * with their table; extensions' objects stay where they are.
 */
function transferOwnership(role: string): string {
  const ours = (namespace: string) => `${namespace} not like 'pg\\_%' and ${namespace} <> 'information_schema'`;
  const notExtensions = (catalog: string, oid: string) =>
    `not exists (select 1 from pg_depend d where d.classid = '${catalog}'::regclass and d.objid = ${oid} and d.deptype = 'e')`;
  return `do $transfer$
declare
  superuser oid := (select oid from pg_roles where rolname = current_user);
  item record;
begin
  for item in
    select format('alter schema %I owner to %I', n.nspname, ${role}) as statement
      from pg_namespace n
     where n.nspowner = superuser and ${ours('n.nspname')}
    union all
    select format('alter %s %s owner to %I',
                  case c.relkind when 'v' then 'view' when 'm' then 'materialized view' when 'S' then 'sequence' when 'f' then 'foreign table' else 'table' end,
                  c.oid::regclass, ${role})
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relowner = superuser and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f') and ${ours('n.nspname')}
       and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype in ('a', 'i', 'e'))
    union all
    select format('alter routine %s owner to %I', p.oid::regprocedure, ${role})
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where p.proowner = superuser and ${ours('n.nspname')} and ${notExtensions('pg_proc', 'p.oid')}
    union all
    select format('alter %s %s owner to %I', case t.typtype when 'd' then 'domain' else 'type' end, t.oid::regtype, ${role})
      from pg_type t join pg_namespace n on n.oid = t.typnamespace
     where t.typowner = superuser and ${ours('n.nspname')} and ${notExtensions('pg_type', 't.oid')}
       and (t.typtype in ('e', 'r', 'd') or (t.typtype = 'c' and (select relkind from pg_class where oid = t.typrelid) = 'c'))
  loop
    execute item.statement;
  end loop;
end
$transfer$`;
}
