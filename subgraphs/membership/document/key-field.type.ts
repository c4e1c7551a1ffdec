import { Field, Int, ObjectType } from '../../shared/type-graphql.js';

@ObjectType({ description: 'A value found in the text (a date, an amount, an invoice number, an e-mail address, an IBAN) and where.' })
export class KeyFieldType {
  @Field(() => String, { description: 'date, amount, invoice-number, email or iban.' })
  kind!: string;

  @Field(() => String, { description: 'As written in the text.' })
  value!: string;

  @Field(() => String, { description: 'ISO date, decimal amount, upper-case IBAN, lower-case e-mail.' })
  normalized!: string;

  @Field(() => String, { nullable: true })
  currency?: string | null;

  @Field(() => Int)
  page!: number;

  @Field(() => Int, { description: 'Offset of the first character in the page text.' })
  start!: number;

  @Field(() => Int, { description: 'Offset after the last character in the page text.' })
  end!: number;
}
