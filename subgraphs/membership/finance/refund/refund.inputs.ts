import { IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from '../../../shared/type-graphql.js';
import { MAX_PAGE_SIZE } from '../../../shared/pagination.js';

@ArgsType()
export class CreateRefundArgs {
  @Field(() => ID)
  paymentId!: string;

  @Field(() => Int, { nullable: true, description: 'Minor units; defaults to all that is still refundable.' })
  @IsOptional()
  @Min(1)
  amount?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 500)
  reason?: string | null;
}

@ArgsType()
export class RefundsArgs {
  @Field(() => ID, { nullable: true })
  @IsOptional()
  paymentId?: string | null;

  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_SIZE}; default 20.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  after?: string | null;
}
