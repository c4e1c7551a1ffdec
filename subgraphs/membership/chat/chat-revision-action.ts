import { registerEnumType } from '../../shared/type-graphql.js';

/** What a revision of a message records. */
export enum ChatRevisionAction {
  EDIT = 'edit',
  DELETE = 'delete',
}

registerEnumType(ChatRevisionAction, {
  name: 'ChatRevisionAction',
  description: 'EDIT: the text was replaced; DELETE: the message was deleted.',
});
