import { Field, InputType, Int, ObjectType } from '../../../shared/type-graphql.js';
import { IsInt, IsOptional, Length, Max, Min } from 'class-validator';

/** One line of an invoice; stored with the invoice, never changed once it is finalised. */
@ObjectType()
export class InvoiceLine {
  @Field(() => String)
  description!: string;

  @Field(() => Int)
  quantity!: number;

  @Field(() => Int, { description: 'Minor units.' })
  unitAmount!: number;

  @Field(() => Int, { description: 'quantity × unitAmount, minor units.' })
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
