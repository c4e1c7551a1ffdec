import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import { EmploymentType, JobPostingStatus } from '../job/job-posting-status.js';
import type { JobPosting } from '../job/job-posting.entity.js';

/**
 * What a ranked posting shows at a glance. The REST view of a match shows this rather than the
 * whole posting (whose poster is a whole member): the answer stays within the edge's query cost.
 */
@ObjectType({ description: 'A job posting at a glance, as a match shows it.' })
export class JobPostingSummary {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  title!: string;

  @Field(() => String, { nullable: true })
  location!: string | null;

  @Field(() => Boolean)
  remote!: boolean;

  @Field(() => [String])
  skills!: string[];

  @Field(() => EmploymentType, { nullable: true })
  employmentType!: EmploymentType | null;

  @Field(() => Int, { nullable: true })
  salaryMin!: number | null;

  @Field(() => Int, { nullable: true })
  salaryMax!: number | null;

  @Field(() => String, { nullable: true })
  salaryCurrency!: string | null;

  @Field(() => DateTimeResolver, { nullable: true })
  closesAt!: Date | null;

  @Field(() => JobPostingStatus)
  status!: JobPostingStatus;
}

/** The summary of a posting. */
export function summaryOf(posting: JobPosting): JobPostingSummary {
  return {
    id: posting.id,
    title: posting.title,
    location: posting.location ?? null,
    remote: posting.remote,
    skills: posting.skills,
    employmentType: posting.employmentType ?? null,
    salaryMin: posting.salaryMin ?? null,
    salaryMax: posting.salaryMax ?? null,
    salaryCurrency: posting.salaryCurrency ?? null,
    closesAt: posting.closesAt ?? null,
    status: posting.status,
  };
}
