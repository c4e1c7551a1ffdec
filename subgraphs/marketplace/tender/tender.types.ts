import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, Float, ID, Int, ObjectType } from '../../shared/type-graphql.js';

/** OCDS `Value`: an amount in a currency (ISO 4217). */
@ObjectType({ description: 'An amount in a currency (OCDS Value).' })
export class Value {
  @Field(() => Float)
  amount!: number;

  @Field(() => String, { description: 'ISO 4217 code, e.g. EUR.' })
  currency!: string;
}

/** OCDS `Period`. */
@ObjectType({ description: 'A period (OCDS Period).' })
export class Period {
  @Field(() => DateTimeResolver, { nullable: true })
  startDate!: Date | null;

  @Field(() => DateTimeResolver, { nullable: true })
  endDate!: Date | null;
}

/** The weights of rated criteria, in percent, summing to 100. */
@ObjectType({ description: 'Weights of rated award criteria, in percent (they sum to 100).' })
export class CriteriaWeights {
  @Field(() => Int)
  price!: number;

  @Field(() => Int)
  quality!: number;
}

/** One lot of a tender, as stored in the tender's `lots` column. */
export interface StoredLot {
  id: string;
  title: string;
  description: string | null;
  amount: string;
}

@ObjectType({ description: 'A lot: a part of the tender bid on and awarded on its own, with its own budget.' })
export class TenderLot {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  title!: string;

  @Field(() => String, { nullable: true })
  description!: string | null;

  @Field(() => Value)
  value!: Value;
}
