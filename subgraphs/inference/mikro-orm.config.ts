import { Provider } from './provider/provider.entity.js';
import { Migration20261122000300Providers } from './migrations/Migration20261122000300Providers.js';

/** The inference subgraph's ORM: its entities and migrations, in the `inference` schema. */
export const inferenceOrmOptions = {
  schema: 'inference',
  entities: [Provider],
  migrations: [{ name: 'Migration20261122000300Providers', class: Migration20261122000300Providers }],
};
