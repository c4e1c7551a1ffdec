import { Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import { DateTimeResolver } from '../../shared/scalars.js';

/** Step 1 of the GraphQL upload: where to PUT the bytes, with the same API key. */
@ObjectType({ description: 'A staged upload: PUT the file’s bytes to uploadPath, then call createDocument(uploadId).' })
export class DocumentUploadTicket {
  @Field(() => ID)
  uploadId!: string;

  @Field(() => String, { description: 'Relative to the membership REST base, e.g. /documents/uploads/<uploadId>.' })
  uploadPath!: string;

  @Field(() => String)
  method!: string;

  @Field(() => Int)
  maxBytes!: number;

  @Field(() => DateTimeResolver)
  expiresAt!: Date;
}
