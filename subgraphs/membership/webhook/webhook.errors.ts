import { DomainError } from '../../../core/errors.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-event-type.js';

export class WebhookUrlRefusedError extends DomainError {
  constructor(message: string) {
    super('BAD_USER_INPUT', message, { param: 'url', reason: 'webhook_url_refused' });
  }
}

export class UnknownEventTypeError extends DomainError {
  constructor(type: string) {
    super('BAD_USER_INPUT', `Unknown event type "${type}"; known types: ${WEBHOOK_EVENT_TYPES.join(', ')}`, {
      param: 'eventTypes',
      reason: 'unknown_event_type',
    });
  }
}

export class WebhookNotFoundError extends DomainError {
  constructor(id: string, param = 'webhookId') {
    super('NOT_FOUND', `No chat webhook with id "${id}"`, { param, reason: 'webhook_not_found' });
  }
}
