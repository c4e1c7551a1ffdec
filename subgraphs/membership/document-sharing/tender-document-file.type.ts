import { Directive, Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';

/** A tender's document with its bytes, read through a grant like TenderDocument. */
@ObjectType('TenderDocumentFile', { description: "A tender's document with its bytes (base64)." })
@Directive('@key(fields: "grant")')
export class TenderDocumentFileType {
  @Field(() => String)
  @Directive('@inaccessible')
  grant!: string;

  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  tenderId!: string;

  @Field(() => Boolean, { description: 'False when the buyer has deleted the document since; its other fields are then null.' })
  available!: boolean;

  @Field(() => String, { nullable: true })
  filename!: string | null;

  @Field(() => String, { nullable: true })
  mimeType!: string | null;

  @Field(() => Int, { nullable: true })
  sizeBytes!: number | null;

  @Field(() => String, { nullable: true, description: 'SHA-256 of the bytes, hex: check contentBase64 against it.' })
  sha256!: string | null;

  @Field(() => String, { nullable: true, description: 'The bytes, base64.' })
  contentBase64!: string | null;
}
