import { openOrm } from './subgraphs/shared/orm.js';
const [mod, exportName] = process.argv.slice(2);
const m = await import(mod);
const opts = m[exportName];
const orm = await openOrm({ clientUrl: process.env.DATABASE_URL!, ...opts, migrations: [] });
console.log(await orm.schema.getCreateSchemaSQL({ wrap: false }));
await orm.close(true);
