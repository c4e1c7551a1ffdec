import { IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from '../../shared/type-graphql.js';
import { MAX_PAGE_SIZE } from '../../shared/pagination.js';

@ArgsType()
export class AuditEventsArgs {
  @Field(() => String, { nullable: true, description: 'member, member_category, invoice, payment or refund.' })
  @IsOptional()
  @Length(1, 32)
  entity?: string | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  entityId?: string | null;

  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_SIZE}; default 20.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  after?: string | null;
}
