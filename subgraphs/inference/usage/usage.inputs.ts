import { ArrayMaxSize, IsOptional, Length, Max, Min } from 'class-validator';
import { DateTimeResolver } from '../../shared/scalars.js';
import { ArgsType, Field, Int } from '../../shared/type-graphql.js';
import { UsageGroupBy } from './usage-group-by.js';
import { UsageInterface } from './usage-interface.js';
import { DEFAULT_USAGE_PAGE_SIZE, MAX_USAGE_PAGE_SIZE, MAX_USAGE_WINDOW_DAYS } from './usage-limits.js';

/** The time window every usage query reads: from inclusive, to exclusive. */
@ArgsType()
export class UsageWindowArgs {
  @Field(() => DateTimeResolver, { description: 'Window start, inclusive.' })
  from!: Date;

  @Field(() => DateTimeResolver, { description: `Window end, exclusive; at most ${MAX_USAGE_WINDOW_DAYS} days after from.` })
  to!: Date;
}

@ArgsType()
export class UsageArgs extends UsageWindowArgs {
  @Field(() => UsageInterface, { nullable: true })
  interface?: UsageInterface | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 64)
  provider?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  model?: string | null;

  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_USAGE_PAGE_SIZE}; default ${DEFAULT_USAGE_PAGE_SIZE}.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_USAGE_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true, description: 'The nextCursor of the previous page.' })
  @IsOptional()
  @Length(1, 200)
  after?: string | null;
}

@ArgsType()
export class UsageSummaryArgs extends UsageWindowArgs {
  @Field(() => [UsageGroupBy], { description: 'Group by these, in this order; none for one total.' })
  @ArrayMaxSize(5)
  groupBy!: UsageGroupBy[];
}
