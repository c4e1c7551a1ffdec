import { IsOptional, IsUUID, Length, Matches } from 'class-validator';
import { ArgsType, Field, ID } from '../../shared/type-graphql.js';
import { PageArgs } from '../../shared/page.args.js';

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
export class JobPostingsArgs extends PageArgs {}
