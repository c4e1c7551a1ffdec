import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { MemberType } from '../member/member.type.js';
import { JobPosting } from './job-posting.entity.js';
import { CloseJobPostingArgs, CreateJobPostingArgs, JobPostingsArgs } from './job-posting.inputs.js';
import { JobPostingPage } from './job-posting-page.js';
import { JobPostingService } from './job-posting.service.js';

const service = (ctx: SubgraphContext) => new JobPostingService(ctx.em, ctx.principal);

@Resolver(() => JobPosting)
export class JobPostingResolver {
  @Query(() => JobPostingPage, { description: 'Job postings, newest first.' })
  jobPostings(@Args(() => JobPostingsArgs) args: JobPostingsArgs, @Ctx() ctx: SubgraphContext): Promise<JobPostingPage> {
    return service(ctx).list(args);
  }

  @Query(() => JobPosting, { nullable: true })
  jobPosting(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<JobPosting | null> {
    return service(ctx).find(id);
  }

  @Mutation(() => JobPosting)
  createJobPosting(
    @Args(() => CreateJobPostingArgs) args: CreateJobPostingArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<JobPosting> {
    return service(ctx).create(args);
  }

  @Mutation(() => JobPosting, { description: 'Opens a draft posting to applications.' })
  publishJobPosting(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<JobPosting> {
    return service(ctx).publish(id);
  }

  @Mutation(() => JobPosting, { description: 'Closes a draft or open posting to applications.' })
  closeJobPosting(@Args(() => CloseJobPostingArgs) args: CloseJobPostingArgs, @Ctx() ctx: SubgraphContext): Promise<JobPosting> {
    return service(ctx).close(args);
  }

  /** A reference only: the gateway fetches the member's fields from the membership subgraph. */
  @FieldResolver(() => MemberType, { nullable: true, description: 'The member who posted the job.' })
  postedBy(@Root() posting: JobPosting): MemberType {
    return { id: posting.postedById };
  }
}
