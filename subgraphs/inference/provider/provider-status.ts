import { registerEnumType } from '../../shared/type-graphql.js';

/** Whether the gateway can route requests to a provider right now. */
export enum ProviderStatus {
  OPERATIONAL = 'operational',
  DEGRADED = 'degraded',
  DOWN = 'down',
}

registerEnumType(ProviderStatus, { name: 'ProviderStatus' });
