import { IsOptional, Length, Matches } from 'class-validator';
import { ArgsType, Field, ID } from '../../shared/type-graphql.js';
import { ChatMessageMode } from './chat-message-mode.js';
import { PageArgs } from '../../shared/page.args.js';

// Flat arguments: the REST bridge maps a JSON body (POST /chat/send) straight onto them. Every
// operation names the member who acts (`asMember`): API keys belong to the account, not to a person.

const AS_MEMBER = 'The member on whose behalf the call is made (a member of the key\'s account and mode).';

@ArgsType()
export class ChatChannelsArgs extends PageArgs {
  @Field(() => ID, { description: AS_MEMBER })
  asMember!: string;
}

@ArgsType()
export class CreateChatChannelArgs {
  @Field(() => ID, { description: AS_MEMBER })
  asMember!: string;

  @Field(() => String, { description: 'Lower-case letters, digits, - and _, 1 to 80 characters; unique in the account.' })
  @Matches(/^[a-z0-9][a-z0-9_-]{0,79}$/, { message: 'name must be 1 to 80 lower-case letters, digits, - or _' })
  name!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 500)
  description?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Private channels are seen only by their members; default false.' })
  private?: boolean | null;

  @Field(() => [ID], { nullable: true, description: 'Members who join with the creator (who always joins).' })
  memberIds?: string[] | null;
}

@ArgsType()
export class JoinChatChannelArgs {
  @Field(() => ID, { description: AS_MEMBER })
  asMember!: string;

  @Field(() => ID)
  channelId!: string;

  @Field(() => ID, {
    nullable: true,
    description: 'Adds this member instead of the acting one; the acting member must then belong to the channel.',
  })
  memberId?: string | null;
}

@ArgsType()
export class LeaveChatChannelArgs {
  @Field(() => ID, { description: AS_MEMBER })
  asMember!: string;

  @Field(() => ID)
  channelId!: string;
}

@ArgsType()
export class SendChatMessageArgs {
  @Field(() => ID, { description: AS_MEMBER })
  asMember!: string;

  @Field(() => ChatMessageMode)
  mode!: ChatMessageMode;

  @Field(() => ID, { nullable: true, description: 'The channel, for CHANNEL messages.' })
  channelId?: string | null;

  @Field(() => ID, { nullable: true, description: 'The recipient member, for DIRECT messages.' })
  to?: string | null;

  @Field(() => String, { description: 'Up to 4,000 characters.' })
  text!: string;
}

@ArgsType()
export class EditChatMessageArgs {
  @Field(() => ID, { description: AS_MEMBER })
  asMember!: string;

  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'Up to 4,000 characters.' })
  text!: string;
}

@ArgsType()
export class DeleteChatMessageArgs {
  @Field(() => ID, { description: AS_MEMBER })
  asMember!: string;

  @Field(() => ID)
  id!: string;
}

@ArgsType()
export class ChatMessagesArgs extends PageArgs {
  @Field(() => ID, { description: AS_MEMBER })
  asMember!: string;

  @Field(() => ID, { nullable: true, description: "A channel's messages." })
  channelId?: string | null;

  @Field(() => ID, { nullable: true, description: 'The direct conversation between the acting member and this one.' })
  withMember?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'The broadcast announcements of the account.' })
  broadcasts?: boolean | null;
}
