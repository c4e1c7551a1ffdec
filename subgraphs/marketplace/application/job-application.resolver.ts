import DataLoader from 'dataloader';
import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from '../../shared/type-graphql.js';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import type { MatchExplanation } from '../../shared/match-score.js';
import { MatchExplanationType } from '../../shared/match.types.js';
import { JobPosting } from '../job/job-posting.entity.js';
import { JobPostingService } from '../job/job-posting.service.js';
import { MemberType } from '../member/member.type.js';
import { ApplicationMatchService } from './application-match.service.js';
import { statusChangedStream, type StatusChangedArgs } from './application-status-changed.js';
import { ApplicationTrailEntry } from './application-trail.js';
import { JobApplication } from './job-application.entity.js';
import { ApplyToJobArgs, HireJobApplicationArgs, JobApplicantsArgs, MoveJobApplicationArgs, RejectJobApplicationArgs } from './job-application.inputs.js';
import { JobApplicationPage } from './job-application-page.js';
import { JobApplicationService } from './job-application.service.js';

const service = (ctx: SubgraphContext) => new JobApplicationService(ctx.em, ctx.principal, ctx.pubsub);

@Resolver(() => JobApplication)
export class JobApplicationResolver {
  @Query(() => JobApplicationPage, { nullable: true, description: "A posting's applications, newest first; null when the posting is not the caller's." })
  jobApplicants(@Args(() => JobApplicantsArgs) args: JobApplicantsArgs, @Ctx() ctx: SubgraphContext): Promise<JobApplicationPage | null> {
    return service(ctx).applicants(args);
  }

  @Query(() => JobApplication, { nullable: true })
  jobApplication(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<JobApplication | null> {
    return service(ctx).find(id);
  }

  @Mutation(() => JobApplication, { description: 'Applies to an open posting, as a member (memberId) or an outside candidate (name, email).' })
  applyToJob(@Args(() => ApplyToJobArgs) args: ApplyToJobArgs, @Ctx() ctx: SubgraphContext): Promise<JobApplication> {
    return service(ctx).apply(args);
  }

  @Mutation(() => JobApplication, { description: 'Moves an active application to another stage.' })
  moveJobApplication(@Args(() => MoveJobApplicationArgs) args: MoveJobApplicationArgs, @Ctx() ctx: SubgraphContext): Promise<JobApplication> {
    return service(ctx).move(args);
  }

  @Mutation(() => JobApplication, { description: 'Rejects an active application, with a reason.' })
  rejectJobApplication(@Args(() => RejectJobApplicationArgs) args: RejectJobApplicationArgs, @Ctx() ctx: SubgraphContext): Promise<JobApplication> {
    return service(ctx).reject(args);
  }

  @Mutation(() => JobApplication, { description: 'Hires an active application; fillPosting marks the posting filled.' })
  hireJobApplication(@Args(() => HireJobApplicationArgs) args: HireJobApplicationArgs, @Ctx() ctx: SubgraphContext): Promise<JobApplication> {
    return service(ctx).hire(args);
  }

  @Mutation(() => JobApplication, { description: 'The candidate withdraws an active application.' })
  withdrawJobApplication(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<JobApplication> {
    return service(ctx).withdraw(id);
  }

  @Subscription(() => JobApplication, {
    description: 'Status and stage changes (and new applications) of one application, or of one member\'s applications.',
    subscribe: ({ args, context }) => statusChangedStream(args as StatusChangedArgs, context as SubgraphContext),
  })
  jobApplicationStatusChanged(
    @Root() application: JobApplication,
    @Arg('applicationId', () => ID, { nullable: true }) _applicationId: string | null,
    @Arg('memberId', () => ID, { nullable: true }) _memberId: string | null,
  ): JobApplication {
    return application;
  }

  @FieldResolver(() => JobPosting, { nullable: true })
  jobPosting(@Root() application: JobApplication, @Ctx() ctx: SubgraphContext): Promise<JobPosting | null> {
    const loader = loaderFor(ctx, 'jobPosting.byId', () => new DataLoader<string, JobPosting | null>((ids) => new JobPostingService(ctx.em, ctx.principal).findMany(ids)));
    return loader.load(application.jobPostingId);
  }

  /** A reference only: the gateway fetches the member's fields from the membership subgraph. */
  @FieldResolver(() => MemberType, { nullable: true, description: 'The applying member; null for an outside candidate.' })
  member(@Root() application: JobApplication): MemberType | null {
    return application.memberId ? { id: application.memberId } : null;
  }

  @FieldResolver(() => MatchExplanationType, { nullable: true, description: 'How well the application matches the posting (same score as job matching).' })
  match(@Root() application: JobApplication, @Ctx() ctx: SubgraphContext): Promise<MatchExplanation | null> {
    const loader = loaderFor(ctx, 'jobApplication.match', () => new DataLoader<string, MatchExplanation | null>((ids) => new ApplicationMatchService(ctx.em, ctx.principal).matches(ids)));
    return loader.load(application.id);
  }

  @FieldResolver(() => [ApplicationTrailEntry], { description: 'Every change, oldest first.' })
  trail(@Root() application: JobApplication, @Ctx() ctx: SubgraphContext): Promise<ApplicationTrailEntry[]> {
    const loader = loaderFor(ctx, 'jobApplication.trail', () => new DataLoader<string, ApplicationTrailEntry[]>((ids) => new ApplicationMatchService(ctx.em, ctx.principal).trails(ids)));
    return loader.load(application.id);
  }
}
