import { Arg, Ctx, Mutation, Query, Resolver, Root, Subscription } from '../../shared/type-graphql.js';
import type { InferenceContext } from '../inference-context.js';
import { Completion } from './completion.js';
import { CompletionChunk } from './completion-chunk.js';
import { ChatCompletionInput, CompletionInput, TokenizeInput } from './generation.inputs.js';
import { chatRequestOf, completionRequestOf, tokenizeRequestOf } from './generation.request.js';
import { GraphqlGeneration, type StreamItem } from './graphql-generation.js';
import { InferenceModel } from './inference-model.js';
import { TokenCount } from './token-count.js';

const generation = (ctx: InferenceContext) => new GraphqlGeneration(ctx.inference, { principal: ctx.principal });

// A subscription's `subscribe` receives its arguments as GraphQL coerced them, plain objects
// rather than the input classes: the request builders only read their fields.

@Resolver()
export class GenerationResolver {
  @Query(() => [InferenceModel], {
    description: "The models the providers serve (every provider, or the one named), each marked by whether the caller's plan includes it.",
  })
  inferenceModels(@Arg('provider', () => String, { nullable: true }) provider: string | null, @Ctx() ctx: InferenceContext): Promise<InferenceModel[]> {
    return generation(ctx).models(provider ?? undefined);
  }

  @Mutation(() => Completion, { description: "A chat's answer, on the caller's plan; the call's usage is recorded with interface GRAPHQL." })
  chatCompletion(@Arg('input', () => ChatCompletionInput) input: ChatCompletionInput, @Ctx() ctx: InferenceContext): Promise<Completion> {
    return generation(ctx).complete(chatRequestOf(input, ctx.inference.jsonMaxDepth));
  }

  @Mutation(() => Completion, { description: "A raw prompt's continuation, on the caller's plan; recorded like chatCompletion." })
  completion(@Arg('input', () => CompletionInput) input: CompletionInput, @Ctx() ctx: InferenceContext): Promise<Completion> {
    return generation(ctx).complete(completionRequestOf(input, ctx.inference.jsonMaxDepth));
  }

  @Mutation(() => TokenCount, { description: 'Counts the tokens of a prompt or of chat messages (with the model chat template).' })
  tokenize(@Arg('input', () => TokenizeInput) input: TokenizeInput, @Ctx() ctx: InferenceContext): Promise<TokenCount> {
    return generation(ctx).tokenize(tokenizeRequestOf(input, ctx.inference.jsonMaxDepth));
  }

  @Subscription(() => CompletionChunk, {
    description:
      "chatCompletion streamed: text chunks as the model writes them, then one with finishReason and usage, then the end. Unsubscribing stops the generation. Refusals are the subscription's first and only event's error.",
    subscribe: async ({ args, context }) => generation(context as InferenceContext).stream(chatRequestOf((args as { input: ChatCompletionInput }).input, (context as InferenceContext).inference.jsonMaxDepth)),
  })
  chatCompletionStream(@Root() item: StreamItem, @Arg('input', () => ChatCompletionInput) _input: ChatCompletionInput): CompletionChunk {
    return chunkOf(item);
  }

  @Subscription(() => CompletionChunk, {
    description: 'completion streamed, chunk by chunk like chatCompletionStream.',
    subscribe: async ({ args, context }) => generation(context as InferenceContext).stream(completionRequestOf((args as { input: CompletionInput }).input, (context as InferenceContext).inference.jsonMaxDepth)),
  })
  completionStream(@Root() item: StreamItem, @Arg('input', () => CompletionInput) _input: CompletionInput): CompletionChunk {
    return chunkOf(item);
  }
}

/** A failure midway is the last event's error (the iterator then ends the subscription). */
function chunkOf(item: StreamItem): CompletionChunk {
  if ('error' in item) throw item.error;
  return item.chunk;
}
