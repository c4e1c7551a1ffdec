import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * The counter per account and mode that the chat's checks keep their reads under
 * (chat-access-cache.ts). Written only by the triggers of Migration20261124210000ChatAccessVersion;
 * declared so that the ORM's schema comparison knows the table. Nothing reads it through the ORM.
 */
@Entity({ tableName: 'chat_access_version' })
export class ChatAccessVersion {
  @PrimaryKey({ type: 'uuid' })
  accountId!: string;

  @PrimaryKey({ type: 'string', length: 4 })
  mode!: string;

  @Property({ type: 'bigint' })
  version!: string;
}
