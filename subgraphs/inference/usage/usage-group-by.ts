import { registerEnumType } from '../../shared/type-graphql.js';

/** What a usage summary may be grouped by. */
export enum UsageGroupBy {
  PROVIDER = 'provider',
  MODEL = 'model',
  INTERFACE = 'interface',
  KEY = 'key',
  STATUS = 'status',
}

registerEnumType(UsageGroupBy, {
  name: 'InferenceUsageGroupBy',
  valuesConfig: {
    KEY: { description: 'The key; keyless calls group by client address.' },
    STATUS: { description: 'The HTTP status answered.' },
  },
});
