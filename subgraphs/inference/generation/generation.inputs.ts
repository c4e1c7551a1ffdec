import { JSONObjectResolver, SafeIntResolver } from 'graphql-scalars';
import { Field, Float, InputType, Int, registerEnumType } from '../../shared/type-graphql.js';

// Ranges are not declared here: the input becomes the gateway interface's request body and is
// checked by its zod schema (protocol/generation-request.ts), so GraphQL and REST refuse the same values.

export enum ChatRole {
  SYSTEM = 'system',
  USER = 'user',
  ASSISTANT = 'assistant',
  DEVELOPER = 'developer',
}

registerEnumType(ChatRole, {
  name: 'InferenceChatRole',
  valuesConfig: { DEVELOPER: { description: "OpenAI's newer name for the system role; chat templates see SYSTEM." } },
});

export enum ContentPartType {
  TEXT = 'text',
  IMAGE_URL = 'image_url',
}

registerEnumType(ContentPartType, { name: 'InferenceContentPartType' });

@InputType('InferenceContentPartInput', { description: 'One part of a vision message: a text (with text) or an image (with imageUrl).' })
export class ContentPartInput {
  @Field(() => ContentPartType)
  type!: ContentPartType;

  @Field(() => String, { nullable: true, description: 'The text of a TEXT part.' })
  text?: string | null;

  @Field(() => String, { nullable: true, description: 'The image of an IMAGE_URL part, as a base64 data URI (data:<mime>;base64,<data>).' })
  imageUrl?: string | null;
}

@InputType('InferenceMessageInput', { description: 'A chat message: its text as content, or (vision) its parts; exactly one of the two.' })
export class MessageInput {
  @Field(() => ChatRole)
  role!: ChatRole;

  @Field(() => String, { nullable: true })
  content?: string | null;

  @Field(() => [ContentPartInput], { nullable: true })
  parts?: ContentPartInput[] | null;
}

/**
 * The sampling and guided-output parameters of chat and raw completions, as the gateway interface
 * takes them. type-graphql inherits fields only from a decorated base; the schema lists it only
 * if a field takes it, which none does.
 */
@InputType()
export class GenerationParamsInput {
  @Field(() => String, { description: 'A model id (or alias) as inferenceModels lists it.' })
  model!: string;

  @Field(() => String, { nullable: true, description: 'The provider to use; by default routing chooses among those serving the model.' })
  provider?: string | null;

  @Field(() => Float, { nullable: true, description: '0 to 2.' })
  temperature?: number | null;

  @Field(() => Float, { nullable: true, description: '0 to 1.' })
  topP?: number | null;

  @Field(() => Int, { nullable: true, description: '-1 (off) or more.' })
  topK?: number | null;

  @Field(() => Float, { nullable: true, description: '0 to 1.' })
  minP?: number | null;

  @Field(() => Int, { nullable: true, description: '1 or more; the generation ends with finishReason LENGTH when reached.' })
  maxTokens?: number | null;

  @Field(() => [String], { nullable: true, description: 'Up to 4 stop sequences.' })
  stop?: string[] | null;

  @Field(() => SafeIntResolver, { nullable: true, description: '0 to 4294967295: the same seed and input give the same text.' })
  seed?: number | null;

  @Field(() => Float, { nullable: true, description: '0 to 2.' })
  presencePenalty?: number | null;

  @Field(() => Float, { nullable: true, description: '0 to 2.' })
  frequencyPenalty?: number | null;

  @Field(() => Float, { nullable: true, description: 'Above 0, at most 2.' })
  repetitionPenalty?: number | null;

  @Field(() => Float, { nullable: true, description: 'Service I: 0 to 1.' })
  topA?: number | null;

  @Field(() => Float, { nullable: true, description: 'Service I: tail-free sampling, 0 to 1.' })
  tfs?: number | null;

  @Field(() => Float, { nullable: true, description: 'Service I: above 0, at most 1.' })
  typicalP?: number | null;

  @Field(() => Int, { nullable: true, description: 'Service I: 0 to 64.' })
  noRepeatNgramSize?: number | null;

  @Field(() => Float, { nullable: true, description: 'Service I: DRY multiplier, 0 to 100.' })
  dryMultiplier?: number | null;

  @Field(() => Float, { nullable: true, description: 'Service I: DRY base, 1 to 100.' })
  dryBase?: number | null;

  @Field(() => Int, { nullable: true, description: 'Service I: DRY allowed length, 1 to 1000.' })
  dryAllowedLength?: number | null;

  @Field(() => Int, { nullable: true, description: 'Service I: 0 (off), 1 or 2.' })
  mirostat?: number | null;

  @Field(() => JSONObjectResolver, { nullable: true, description: 'Output matching this JSON schema. At most one of guidedJson, guidedRegex, guidedChoice.' })
  guidedJson?: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'Output matching this regular expression.' })
  guidedRegex?: string | null;

  @Field(() => [String], { nullable: true, description: 'Output that is exactly one of these.' })
  guidedChoice?: string[] | null;
}

@InputType()
export class ChatCompletionInput extends GenerationParamsInput {
  @Field(() => [MessageInput])
  messages!: MessageInput[];
}

@InputType()
export class CompletionInput extends GenerationParamsInput {
  @Field(() => String)
  prompt!: string;
}

@InputType({ description: 'Counts the tokens of a prompt, or of chat messages with the model chat template: exactly one of the two.' })
export class TokenizeInput {
  @Field(() => String)
  model!: string;

  @Field(() => String, { nullable: true })
  provider?: string | null;

  @Field(() => [MessageInput], { nullable: true })
  messages?: MessageInput[] | null;

  @Field(() => String, { nullable: true })
  prompt?: string | null;
}
