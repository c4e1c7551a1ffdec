import { SafeIntResolver } from 'graphql-scalars';
import { Field, InputType, Int, ObjectType } from '../../../shared/type-graphql.js';
import { IsInt, IsOptional, Length, Max, Min } from 'class-validator';

/**
 * The most an invoice, and any one of its lines either way, may amount to in minor units: within
 * GraphQL's 32-bit Int (the total and every amount paid or refunded are Ints) with room to spare.
 */
export const MAX_INVOICE_AMOUNT = 2_000_000_000;

/** One line of an invoice; stored with the invoice, never changed once it is finalised. */
@ObjectType()
export class InvoiceLine {
  @Field(() => String)
  description!: string;

  @Field(() => Int)
  quantity!: number;

  @Field(() => Int, { description: 'Minor units.' })
  unitAmount!: number;

  // SafeInt, not Int: lines stored before each line was bounded may exceed 32 bits, and one such
  // row must not fail every list that holds it. New lines stay within ±MAX_INVOICE_AMOUNT.
  @Field(() => SafeIntResolver, { description: 'quantity × unitAmount, minor units.' })
  amount!: number;
}

@InputType()
export class InvoiceLineInput {
  @Field(() => String)
  @Length(1, 500)
  description!: string;

  @Field(() => Int, { nullable: true, description: 'Defaults to 1.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  quantity?: number | null;

  @Field(() => Int, { description: 'Minor units; negative for a discount line.' })
  @IsInt()
  @Min(-100_000_000)
  @Max(100_000_000)
  unitAmount!: number;
}
