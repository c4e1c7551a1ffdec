import { IsOptional, Max, Min } from 'class-validator';
import { ArgsType, Field, Int } from '../../shared/type-graphql.js';
import { TraceDirection } from './trace-direction.js';
import { TraceStatus } from './trace-status.js';

/** The public API's search page size: default 50, maximum 200. */
export const DEFAULT_TRACE_PAGE_SIZE = 50;
export const MAX_TRACE_PAGE_SIZE = 200;

@ArgsType()
export class TracesArgs {
  @Field(() => TraceDirection, { nullable: true })
  direction?: TraceDirection | null;

  @Field(() => TraceStatus, { nullable: true })
  status?: TraceStatus | null;

  @Field(() => Int, {
    nullable: true,
    description: `Page size, 1 to ${MAX_TRACE_PAGE_SIZE}; default ${DEFAULT_TRACE_PAGE_SIZE}.`,
  })
  @IsOptional()
  @Min(1)
  @Max(MAX_TRACE_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true, description: 'The nextCursor of the previous page.' })
  @IsOptional()
  after?: string | null;
}
