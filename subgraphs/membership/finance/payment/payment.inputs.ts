import { IsOptional, Length, Min } from 'class-validator';
import { DateTimeResolver } from '../../../shared/scalars.js';
import { ArgsType, Field, ID, Int } from '../../../shared/type-graphql.js';
import { PaymentMethod } from './payment-method.js';
import { PageArgs } from '../../../shared/page.args.js';

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
export class PaymentsArgs extends PageArgs {
  @Field(() => ID, { nullable: true })
  @IsOptional()
  invoiceId?: string | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  memberId?: string | null;
}
