import { registerEnumType } from '../../shared/type-graphql.js';

export enum ChatWebhookDeliveryStatus {
  PENDING = 'pending',
  SUCCEEDED = 'succeeded',
  FAILED = 'failed',
}

registerEnumType(ChatWebhookDeliveryStatus, {
  name: 'ChatWebhookDeliveryStatus',
  description: 'PENDING: to be (re)tried; SUCCEEDED: answered 2xx; FAILED: retries ran out, 410, or the endpoint was disabled.',
});
