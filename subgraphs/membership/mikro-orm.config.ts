import { Member } from './member/member.entity.js';
import { Event } from './event/event.entity.js';
import { Attendee } from './event/attendee.entity.js';
import { Migration20261122000100Members } from './migrations/Migration20261122000100Members.js';
import { Migration20261122033000Events } from './migrations/Migration20261122033000Events.js';
import { ChatChannel } from './chat/chat-channel.entity.js';
import { ChatChannelMember } from './chat/chat-channel-member.entity.js';
import { ChatMessage } from './chat/chat-message.entity.js';
import { ChatMessageRevision } from './chat/chat-message-revision.entity.js';
import { Migration20261122040000Chat } from './migrations/Migration20261122040000Chat.js';

/** The membership subgraph's ORM: its entities and migrations, in the `membership` schema. */
export const membershipOrmOptions = {
  schema: 'membership',
  entities: [Member, Event, Attendee, ChatChannel, ChatChannelMember, ChatMessage, ChatMessageRevision],
  migrations: [
    { name: 'Migration20261122000100Members', class: Migration20261122000100Members },
    { name: 'Migration20261122033000Events', class: Migration20261122033000Events },
    { name: 'Migration20261122040000Chat', class: Migration20261122040000Chat },
  ],
};
