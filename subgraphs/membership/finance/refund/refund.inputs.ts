import { IsOptional, Length, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from '../../../shared/type-graphql.js';
import { PageArgs } from '../../../shared/page.args.js';

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
export class RefundsArgs extends PageArgs {
  @Field(() => ID, { nullable: true })
  @IsOptional()
  paymentId?: string | null;
}
