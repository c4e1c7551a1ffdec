import { Directive, Field, ObjectType } from '../../shared/type-graphql.js';

/** A tender's document with its bytes, handed out as a grant like TenderDocument: one document at a time. */
@ObjectType('TenderDocumentFile', { description: "A tender's document with its bytes (base64)." })
@Directive('@key(fields: "grant", resolvable: false)')
export class TenderDocumentFileType {
  /** Part of the key only: @inaccessible keeps it out of the API schema. */
  @Field(() => String)
  @Directive('@inaccessible')
  grant!: string;
}
