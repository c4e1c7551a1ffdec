/**
 * The triggers that keep `membership.chat_access_version` current, as the entities declare them
 * (`Member`, `ChatChannelMember`): MikroORM's schema comparison drops triggers an entity does not
 * declare, and compares declared ones by name. Migration20261124210000ChatAccessVersion creates
 * them and their functions with its own copy of this text, as migrations do not change afterwards.
 * Here, beside the member, because the chat folder imports this one and not the reverse.
 */
interface TriggerDeclaration {
  name: string;
  timing: 'after';
  events: ('insert' | 'update' | 'delete')[];
  forEach: 'statement';
  expression: string;
}

function trigger(table: 'member' | 'chat_channel_member', event: 'insert' | 'update' | 'delete'): TriggerDeclaration {
  const name = `${table}_chat_access_${{ insert: 'inserted', update: 'updated', delete: 'deleted' }[event]}`;
  const fn = table === 'member' ? 'chat_access_members_changed' : 'chat_access_channel_members_changed';
  const referencing = { insert: 'referencing new table as "new_rows" ', update: 'referencing old table as "old_rows" new table as "new_rows" ', delete: 'referencing old table as "old_rows" ' }[event];
  return {
    name,
    timing: 'after',
    events: [event],
    forEach: 'statement',
    expression: `create trigger "${name}" after ${event} on "membership"."${table}" ${referencing}for each statement execute function "membership"."${fn}"();`,
  };
}

// The migration also makes a `before truncate` trigger on each table. They are not declared here:
// MikroORM 7.2.1 reads triggers from information_schema, which lists no truncate triggers, so it
// would offer to create declared ones again; undeclared, it neither sees nor drops them.

/** Members: an update (archival or scope) or a delete. Inserts are never kept, so they need no bump. */
export const MEMBER_CHAT_ACCESS_TRIGGERS = (['update', 'delete'] as const).map((event) => trigger('member', event));
/** Channel memberships: any change. */
export const CHANNEL_MEMBER_CHAT_ACCESS_TRIGGERS = (['insert', 'update', 'delete'] as const).map((event) => trigger('chat_channel_member', event));
