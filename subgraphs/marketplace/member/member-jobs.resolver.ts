import DataLoader from 'dataloader';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { Ctx, FieldResolver, Resolver, Root } from '../../shared/type-graphql.js';
import { JobPosting } from '../job/job-posting.entity.js';
import { JobPostingService } from '../job/job-posting.service.js';
import { MemberType } from './member.type.js';

/** Member.jobPostings: the jobs a member posted, newest first; all members of a request in one statement. */
@Resolver(() => MemberType)
export class MemberJobsResolver {
  @FieldResolver(() => [JobPosting], { description: 'Job postings this member posted, newest first (at most 100).' })
  jobPostings(@Root() member: MemberType, @Ctx() ctx: SubgraphContext): Promise<JobPosting[]> {
    const loader = loaderFor(
      ctx,
      'jobPosting.byPoster',
      () => new DataLoader<string, JobPosting[]>((ids) => new JobPostingService(ctx.em, ctx.principal).byPosters(ids)),
    );
    return loader.load(member.id);
  }
}
