import DataLoader from 'dataloader';
import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { EventAnalytics } from './event-analytics.js';
import { analyticsFor } from './event-analytics.service.js';
import { Event } from './event.entity.js';
import { CreateEventArgs, EventsArgs, UpdateEventArgs } from './event.inputs.js';
import type { RegistrationBillingContext } from './registration-billing.js';
import { EventPage } from './event-page.js';
import { EventService } from './event.service.js';

const service = (ctx: SubgraphContext) => new EventService(ctx.em, ctx.principal);

@Resolver(() => Event)
export class EventResolver {
  @Query(() => EventPage, { description: 'Events of the account, newest first.' })
  events(@Args(() => EventsArgs) args: EventsArgs, @Ctx() ctx: SubgraphContext): Promise<EventPage> {
    return service(ctx).list(args);
  }

  @Query(() => Event, { nullable: true })
  event(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Event | null> {
    return service(ctx).find(id);
  }

  @Mutation(() => Event)
  createEvent(@Args(() => CreateEventArgs) args: CreateEventArgs, @Ctx() ctx: SubgraphContext): Promise<Event> {
    return service(ctx).create(args);
  }

  @Mutation(() => Event, {
    description: 'Changes a scheduled event: title, description, location, times, capacity (an increase promotes the waitlist in order), payment term; price and currency before the first registration.',
  })
  updateEvent(@Args(() => UpdateEventArgs) args: UpdateEventArgs, @Ctx() ctx: SubgraphContext & Partial<RegistrationBillingContext>): Promise<Event> {
    return service(ctx).update(args, ctx.registrationBilling);
  }

  @Mutation(() => Event, { description: 'Cancels the event: registration and check-in stop.' })
  cancelEvent(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Event> {
    return service(ctx).cancel(id);
  }

  /** Batched: a page of events costs two aggregate statements, not two per event. */
  @FieldResolver(() => EventAnalytics)
  analytics(@Root() event: Event, @Ctx() ctx: SubgraphContext): Promise<EventAnalytics> {
    const loader = loaderFor(
      ctx,
      'event.analytics',
      () => new DataLoader<Event, EventAnalytics, string>((events) => analyticsFor(ctx.em, events), { cacheKeyFn: (e) => e.id }),
    );
    return loader.load(event);
  }
}
