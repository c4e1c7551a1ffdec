import { IsOptional, Max, Min } from 'class-validator';
import { MAX_PAGE_SIZE } from './pagination.js';
import { ArgsType, Field, Int } from './type-graphql.js';

/** The paging arguments of every list: a page size and the cursor of the previous page. */
@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_SIZE}; default 20.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true, description: 'The nextCursor of the previous page.' })
  @IsOptional()
  after?: string | null;
}
