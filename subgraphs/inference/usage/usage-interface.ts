import { registerEnumType } from '../../shared/type-graphql.js';

/** The interface a call came in through: the keyed REST services, the keyless proxy, the multi-provider gateway, or GraphQL. */
export enum UsageInterface {
  SERVICE_T = 'service_t',
  SERVICE_I = 'service_i',
  PROXY = 'proxy',
  GATEWAY = 'gateway',
  GRAPHQL = 'graphql',
}

registerEnumType(UsageInterface, {
  name: 'InferenceInterface',
  valuesConfig: {
    SERVICE_T: { description: 'Service T, text and vision, keyed.' },
    SERVICE_I: { description: 'Service I, image and text, keyed.' },
    PROXY: { description: "Service I's keyless proxy: records carry the client address, not a key." },
    GATEWAY: { description: 'The multi-provider gateway.' },
    GRAPHQL: { description: 'Inference through the GraphQL API.' },
  },
});
