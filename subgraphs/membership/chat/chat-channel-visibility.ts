import { registerEnumType } from '../../shared/type-graphql.js';

/** Public channels are seen (and joined) by every member; private ones only by their members. */
export enum ChatChannelVisibility {
  PUBLIC = 'public',
  PRIVATE = 'private',
}

registerEnumType(ChatChannelVisibility, {
  name: 'ChatChannelVisibility',
  description: 'PUBLIC: every member of the account sees and may join it; PRIVATE: only its members see it.',
});
