import { registerEnumType } from '../../shared/type-graphql.js';

/** How a message is addressed: to one member, to a channel's members, or to every member of the account. */
export enum ChatMessageMode {
  DIRECT = 'direct',
  CHANNEL = 'channel',
  BROADCAST = 'broadcast',
}

registerEnumType(ChatMessageMode, {
  name: 'ChatMessageMode',
  description: 'DIRECT: to one member; CHANNEL: to the members of a channel; BROADCAST: an announcement to every member.',
});
