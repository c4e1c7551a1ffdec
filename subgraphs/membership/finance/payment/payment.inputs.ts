import { IsOptional, Length, Max, Min } from 'class-validator';
import { DateTimeResolver } from 'graphql-scalars';
import { ArgsType, Field, ID, Int } from '../../../shared/type-graphql.js';
import { MAX_PAGE_SIZE } from '../../../shared/pagination.js';
import { PaymentMethod } from './payment-method.js';

@ArgsType()
export class CreatePaymentArgs {
  @Field(() => ID)
  invoiceId!: string;

  @Field(() => Int, { description: 'Minor units; at most what the invoice still owes.' })
  @Min(1)
  amount!: number;

  @Field(() => PaymentMethod)
  method!: PaymentMethod;

  @Field(() => String, { nullable: true, description: "Must be the invoice's currency when given." })
  @IsOptional()
  currency?: string | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Defaults to now.' })
  @IsOptional()
  receivedAt?: Date | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  reference?: string | null;
}

@ArgsType()
export class PaymentsArgs {
  @Field(() => ID, { nullable: true })
  @IsOptional()
  invoiceId?: string | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  memberId?: string | null;

  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_SIZE}; default 20.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  after?: string | null;
}
