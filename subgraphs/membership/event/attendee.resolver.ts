import { Args, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { Member } from '../member/member.entity.js';
import { memberReference } from '../member/member.reference.js';
import { Attendee } from './attendee.entity.js';
import { AttendeePage } from './attendee-page.js';
import { AttendeeService } from './attendee.service.js';
import { CheckInResult } from './check-in-result.js';
import { AttendeesArgs, CancelRegistrationArgs, CheckInArgs, RegisterArgs } from './event.inputs.js';
import type { RegistrationBillingContext } from './registration-billing.js';

type Context = SubgraphContext & Partial<RegistrationBillingContext>;
const service = (ctx: Context) => new AttendeeService(ctx.em, ctx.principal, ctx.registrationBilling);

@Resolver(() => Attendee)
export class AttendeeResolver {
  @Query(() => AttendeePage, { nullable: true, description: "An event's attendees, newest registration first; null when there is no such event." })
  eventAttendees(@Args(() => AttendeesArgs) args: AttendeesArgs, @Ctx() ctx: Context): Promise<AttendeePage | null> {
    return service(ctx).list(args);
  }

  @Mutation(() => Attendee, { description: 'Registers a member or a guest: registered while places are free (a paid event: PENDING with an invoice until it is paid), else waitlisted.' })
  registerForEvent(@Args(() => RegisterArgs) args: RegisterArgs, @Ctx() ctx: Context): Promise<Attendee> {
    return service(ctx).register(args);
  }

  @Mutation(() => Attendee, { description: 'Cancels a registration; a freed place goes to the first on the waitlist.' })
  cancelRegistration(@Args(() => CancelRegistrationArgs) args: CancelRegistrationArgs, @Ctx() ctx: Context): Promise<Attendee> {
    return service(ctx).cancel(args);
  }

  @Mutation(() => CheckInResult, { description: 'Checks an attendee in by id or code; repeating it is safe.' })
  checkInAttendee(@Args(() => CheckInArgs) args: CheckInArgs, @Ctx() ctx: Context): Promise<CheckInResult> {
    return service(ctx).checkIn(args);
  }

  /** The registering member (archived members too), batched with every other member reference of the request. */
  @FieldResolver(() => Member, { nullable: true })
  member(@Root() attendee: Attendee, @Ctx() ctx: Context): Promise<Member | null> | null {
    const id = attendee.memberId;
    return id ? memberReference.__resolveReference({ id }, ctx) : null;
  }
}
