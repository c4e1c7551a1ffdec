import { Field, ObjectType } from '../../shared/type-graphql.js';
import { JobPosting } from './job-posting.entity.js';

/** One page of job postings, newest first, with the cursor of the next page. */
@ObjectType()
export class JobPostingPage {
  @Field(() => [JobPosting])
  data!: JobPosting[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
