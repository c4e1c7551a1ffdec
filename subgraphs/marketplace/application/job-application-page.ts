import { Field, ObjectType } from '../../shared/type-graphql.js';
import { JobApplication } from './job-application.entity.js';

/** One page of a posting's applications, newest first. */
@ObjectType()
export class JobApplicationPage {
  @Field(() => [JobApplication])
  data!: JobApplication[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
