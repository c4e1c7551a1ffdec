import { IsOptional, IsUUID, Length, Matches, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from '../../shared/type-graphql.js';
import { MAX_PAGE_SIZE } from '../../shared/pagination.js';

@ArgsType()
export class CreateJobPostingArgs {
  @Field(() => String)
  @Length(1, 200)
  @Matches(/\S/, { message: 'title must not be blank' })
  title!: string;

  @Field(() => String)
  @Length(1, 20000)
  description!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  location?: string | null;

  @Field(() => ID, { description: 'The id of the member who posts the job.' })
  @IsUUID(undefined, { message: 'postedBy must be a member id' })
  postedBy!: string;
}

@ArgsType()
export class JobPostingsArgs {
  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_SIZE}; default 20.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true, description: 'The nextCursor of the previous page.' })
  @IsOptional()
  after?: string | null;
}
