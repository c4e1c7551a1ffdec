import { DomainError } from '../../../core/errors.js';

/** Longest message text, in characters (UTF-16 code units, as JavaScript and GraphQL count them). */
export const MAX_MESSAGE_LENGTH = 4000;

export class UnknownMemberError extends DomainError {
  constructor(param: string, id: string) {
    super('BAD_USER_INPUT', `No member with id "${id}" in this account`, { param, reason: 'unknown_member' });
  }
}

export class UnknownRecipientError extends DomainError {
  constructor(id: string) {
    super('BAD_USER_INPUT', `No member with id "${id}" to send to`, { param: 'to', reason: 'unknown_recipient' });
  }
}

export class ChannelNotFoundError extends DomainError {
  constructor(id: string, param = 'channelId') {
    super('NOT_FOUND', `No chat channel with id "${id}"`, { param, reason: 'channel_not_found' });
  }
}

export class NotChannelMemberError extends DomainError {
  constructor(id: string) {
    super('FORBIDDEN', `The acting member is not a member of channel "${id}"`, { param: 'channelId', reason: 'not_channel_member' });
  }
}

export class ChannelNameTakenError extends DomainError {
  constructor(name: string) {
    super('CONFLICT', `A channel named "${name}" already exists`, { param: 'name', reason: 'channel_name_taken' });
  }
}

export class MessageTooLongError extends DomainError {
  constructor(length: number) {
    super('BAD_USER_INPUT', `text is ${length} characters long; the limit is ${MAX_MESSAGE_LENGTH}`, {
      param: 'text',
      reason: 'message_too_long',
    });
  }
}

export class MessageEmptyError extends DomainError {
  constructor() {
    super('BAD_USER_INPUT', 'text must not be blank', { param: 'text', reason: 'message_empty' });
  }
}

export class MessageNotFoundError extends DomainError {
  constructor(id: string) {
    super('NOT_FOUND', `No chat message with id "${id}"`, { param: 'id', reason: 'message_not_found' });
  }
}

export class NotMessageSenderError extends DomainError {
  constructor() {
    super('FORBIDDEN', 'Only the sender of a message may edit or delete it', { param: 'asMember', reason: 'not_message_sender' });
  }
}

export class MessageDeletedError extends DomainError {
  constructor(id: string) {
    super('CONFLICT', `Message "${id}" is deleted`, { param: 'id', reason: 'message_deleted' });
  }
}

/** A mode's target is missing, or a target is given that the mode does not take. */
export class ChatTargetError extends DomainError {
  constructor(param: string, message: string) {
    super('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
  }
}
