import { Field, Float, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import { DocumentStatus } from './document-status.js';
import { ExtractedPageType } from './extracted-page.type.js';
import { KeyFieldType } from './key-field.type.js';

/** What extraction found; everything but the status is null until the document is READY. */
@ObjectType({ description: 'A document’s extracted text, per page, with its key fields.' })
export class DocumentExtraction {
  @Field(() => ID)
  id!: string;

  @Field(() => DocumentStatus)
  status!: DocumentStatus;

  @Field(() => String, { nullable: true })
  failureReason!: string | null;

  @Field(() => [ExtractedPageType], { nullable: true })
  pages!: ExtractedPageType[] | null;

  @Field(() => String, { nullable: true })
  text!: string | null;

  @Field(() => Int, { nullable: true })
  pageCount!: number | null;

  @Field(() => String, { nullable: true, description: 'text-layer, ocr, mixed or plain.' })
  method!: string | null;

  @Field(() => Float, { nullable: true })
  confidence!: number | null;

  @Field(() => String, { nullable: true })
  language!: string | null;

  @Field(() => [KeyFieldType], { nullable: true })
  keyFields!: KeyFieldType[] | null;
}
