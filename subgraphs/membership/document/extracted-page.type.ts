import { Field, Float, Int, ObjectType } from '../../shared/type-graphql.js';

@ObjectType({ description: 'The text of one page and how it was read.' })
export class ExtractedPageType {
  @Field(() => Int)
  page!: number;

  @Field(() => String)
  text!: string;

  @Field(() => String, { description: 'text-layer, ocr or plain.' })
  method!: string;

  @Field(() => Float, { nullable: true, description: 'OCR confidence, 0 to 1; null when not OCR.' })
  confidence!: number | null;
}
