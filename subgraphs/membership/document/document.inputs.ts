import { ArrayMaxSize, IsIn, IsOptional, IsUUID, Length, Matches, MaxLength } from 'class-validator';
import { ArgsType, Field, ID } from '../../shared/type-graphql.js';
import { PageArgs } from '../../shared/page.args.js';
import { DateTimeResolver } from '../../shared/scalars.js';
import { DocumentStatus } from './document-status.js';

/** What a document is filed under, given with its file. */
@ArgsType()
export class DocumentDetailsArgs {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 300)
  title?: string | null;

  @Field(() => String, { nullable: true, description: 'One of the account’s document categories; set by the user, so the classifier does not override it.' })
  @IsOptional()
  @Length(1, 100)
  category?: string | null;

  @Field(() => [String], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(20)
  @Length(1, 50, { each: true })
  tags?: string[] | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  @IsUUID(undefined, { message: 'memberId must be a member id' })
  memberId?: string | null;
}

@ArgsType()
export class CreateDocumentArgs extends DocumentDetailsArgs {
  @Field(() => ID, { description: 'The id createDocumentUpload (or the REST upload) returned, its bytes stored.' })
  @IsUUID(undefined, { message: 'uploadId must be an upload id' })
  uploadId!: string;
}

@ArgsType()
export class UploadDocumentBase64Args extends DocumentDetailsArgs {
  @Field(() => String)
  @Length(1, 255)
  @Matches(/^[^\u0000-\u001f/\\]+$/, { message: 'filename must be a file name without path separators or control characters' })
  filename!: string;

  @Field(() => String, { description: 'The file in base64; within the GraphQL body limit (1 MiB), so for small files.' })
  @Length(1, 2_000_000)
  content!: string;
}

/** A document's title and tags, changed after upload (null clears the title; tags replace the old ones). */
@ArgsType()
export class UpdateDocumentArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 300)
  title?: string | null;

  @Field(() => [String], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(20)
  @Length(1, 50, { each: true })
  tags?: string[] | null;
}

@ArgsType()
export class CreateDocumentUploadArgs {
  @Field(() => String)
  @Length(1, 255)
  @Matches(/^[^\u0000-\u001f/\\]+$/, { message: 'filename must be a file name without path separators or control characters' })
  filename!: string;
}

@ArgsType()
export class DocumentsArgs extends PageArgs {
  @Field(() => String, { nullable: true, description: 'Full-text search over title and extracted text; ranks the results and adds a snippet.' })
  @IsOptional()
  @Length(1, 200)
  q?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(100)
  category?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(50)
  tag?: string | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  @IsUUID(undefined, { message: 'memberId must be a member id' })
  memberId?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(100)
  mimeType?: string | null;

  @Field(() => DocumentStatus, { nullable: true })
  @IsOptional()
  @IsIn(Object.values(DocumentStatus))
  status?: DocumentStatus | null;

  @Field(() => DateTimeResolver, { nullable: true })
  @IsOptional()
  createdFrom?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true })
  @IsOptional()
  createdTo?: Date | null;

  @Field(() => Boolean, { nullable: true, description: 'true lists the trash instead.' })
  @IsOptional()
  trashed?: boolean | null;
}
