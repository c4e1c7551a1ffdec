import { IsOptional, Length, Max, Min } from 'class-validator';
import { DateTimeResolver } from '../../shared/scalars.js';
import { ArgsType, Field, Int } from '../../shared/type-graphql.js';

@ArgsType()
export class IssueTracerouteKeyArgs {
  @Field(() => String, { description: 'The account (researcher or organisation) the key is for.' })
  @Length(1, 64)
  account!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 120)
  name?: string | null;

  @Field(() => Int, { nullable: true, description: 'Requests per hour; default 100.' })
  @IsOptional()
  @Min(1)
  @Max(10_000_000)
  hourlyLimit?: number | null;

  @Field(() => Int, { nullable: true, description: 'Requests per day; default 2,000.' })
  @IsOptional()
  @Min(1)
  @Max(10_000_000)
  dailyLimit?: number | null;

  @Field(() => DateTimeResolver, { nullable: true })
  expiresAt?: Date | null;
}
