import { Directive, Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';

/**
 * A tender's document as a vendor sees it: the buyer's document, read through a grant the
 * marketplace signed (document-grant.ts). `available` is false when the buyer deleted it since.
 */
@ObjectType('TenderDocument', { description: "A tender's document, readable by the buyer and by the vendors who may bid." })
@Directive('@key(fields: "grant")')
export class TenderDocumentType {
  /** The signed grant; part of the key only (@inaccessible: no client sees it). */
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
  title!: string | null;

  @Field(() => String, { nullable: true, description: 'The type sniffed from the bytes.' })
  mimeType!: string | null;

  @Field(() => Int, { nullable: true })
  sizeBytes!: number | null;

  @Field(() => String, { nullable: true, description: 'SHA-256 of the bytes, hex.' })
  sha256!: string | null;
}
