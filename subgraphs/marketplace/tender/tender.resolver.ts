import DataLoader from 'dataloader';
import { Arg, Args, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { Award } from '../award/award.entity.js';
import { AwardService } from '../award/award.service.js';
import { BidService } from '../bid/bid.service.js';
import { Tender } from './tender.entity.js';
import { CancelTenderArgs, CreateTenderArgs, TendersArgs, UpdateTenderArgs } from './tender.inputs.js';
import { TenderPage } from './tender-page.js';
import { TenderService } from './tender.service.js';
import { JSONObjectResolver } from 'graphql-scalars';
import { DEFAULT_OCDS_SETTINGS, type OcdsSettingsContext } from './ocds-settings.js';
import { tenderReleasePackage } from './tender-ocds.js';
import { GRANT_SECONDS, type TenderDocumentGrant } from './tender-document-grant.js';
import { TenderDocumentFileType } from './tender-document-file.type.js';
import { TenderDocumentPage } from './tender-document-page.js';
import { TenderDocumentType } from './tender-document.type.js';

const service = (ctx: SubgraphContext) => new TenderService(ctx.em, ctx.principal);

type Context = SubgraphContext & { tenderDocumentGrants: { sign(grant: TenderDocumentGrant): string } };

/** A grant to read one of the tender's documents (the buyer's account and mode), for this request. */
function grantFor(ctx: Context, tender: Tender, documentId: string): string {
  return ctx.tenderDocumentGrants.sign({ tenderId: tender.id, documentId, accountId: tender.accountId, mode: tender.mode, expiresAt: Math.floor(Date.now() / 1000) + GRANT_SECONDS });
}

@Resolver(() => Tender)
export class TenderResolver {
  @Query(() => TenderPage, { description: "Tenders of this mode: the caller's own in every status, others' once published; newest first." })
  tenders(@Args(() => TendersArgs) args: TendersArgs, @Ctx() ctx: SubgraphContext): Promise<TenderPage> {
    return service(ctx).list(args);
  }

  @Query(() => Tender, { nullable: true })
  tender(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Tender | null> {
    return service(ctx).find(id);
  }

  @Query(() => TenderDocumentPage, {
    description: "A tender's documents, for its buyer and for the vendors who may bid on it (approved; invited, for a selective tender): read through grants, the buyer's other documents stay closed.",
  })
  async tenderDocuments(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<TenderDocumentPage> {
    const { tender, documentIds } = await service(ctx).readableDocuments(id);
    return { data: documentIds.map((documentId) => ({ grant: grantFor(ctx, tender, documentId) })), hasMore: false, nextCursor: null };
  }

  @Query(() => TenderDocumentFileType, { nullable: true, description: 'One of the tender\'s documents with its bytes (base64); null when the tender does not list it.' })
  async tenderDocument(@Arg('id', () => ID) id: string, @Arg('documentId', () => ID) documentId: string, @Ctx() ctx: Context): Promise<TenderDocumentFileType | null> {
    const { tender, documentIds } = await service(ctx).readableDocuments(id);
    const listed = documentIds.find((listedId) => listedId.toLowerCase() === documentId.toLowerCase());
    return listed ? { grant: grantFor(ctx, tender, listed) } : null;
  }

  @Query(() => JSONObjectResolver, {
    nullable: true,
    description: 'The tender as an OCDS 1.1 release package (one release: the tender now, its parties, awards and contracts), for anyone who may see the tender; null otherwise.',
  })
  async tenderReleasePackage(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext & OcdsSettingsContext): Promise<Record<string, unknown> | null> {
    const tender = await service(ctx).find(id);
    return tender ? tenderReleasePackage(ctx.em, ctx.principal, tender, ctx.ocdsSettings ?? DEFAULT_OCDS_SETTINGS) : null;
  }

  @Mutation(() => Tender, { description: 'Creates a tender as a draft (or published at once with publish: true).' })
  createTender(@Args(() => CreateTenderArgs) args: CreateTenderArgs, @Ctx() ctx: SubgraphContext): Promise<Tender> {
    return service(ctx).create(args);
  }

  @Mutation(() => Tender, { description: 'Changes a draft, or the terms of an active tender: bids placed under the old terms become INVALID until confirmed.' })
  updateTender(@Args(() => UpdateTenderArgs) args: UpdateTenderArgs, @Ctx() ctx: SubgraphContext): Promise<Tender> {
    return service(ctx).update(args);
  }

  @Mutation(() => Tender, { description: 'Publishes a draft: ACTIVE, open for bids until tenderPeriod.endDate.' })
  publishTender(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Tender> {
    return service(ctx).publish(id);
  }

  @Mutation(() => Tender, { description: 'Cancels a tender that is not complete, with a reason.' })
  cancelTender(@Args(() => CancelTenderArgs) args: CancelTenderArgs, @Ctx() ctx: SubgraphContext): Promise<Tender> {
    return service(ctx).cancel(args);
  }

  @Mutation(() => Tender, { description: 'The contracts are signed: an AWARDED tender whose awards are all active becomes COMPLETE.' })
  completeTender(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Tender> {
    return new AwardService(ctx.em, ctx.principal).complete(id);
  }

  @FieldResolver(() => Int, {
    nullable: true,
    description:
      'Bids placed and not withdrawn: a count only, never amounts or vendors. Sealed like the bids: null to anyone but the buyer until the tender period is over (past ACTIVE; a tender cancelled while open, once its deadline has passed).',
  })
  bidCount(@Root() tender: Tender, @Ctx() ctx: SubgraphContext): Promise<number | null> {
    return loaderFor(ctx, 'tender.bidCount', () => new DataLoader<string, number | null>((ids) => new BidService(ctx.em, ctx.principal).countsOf(ids))).load(tender.id);
  }

  @FieldResolver(() => [Award], { description: 'The awards (cancelled ones included), published once the tender period is over; empty before.' })
  awards(@Root() tender: Tender, @Ctx() ctx: SubgraphContext): Promise<Award[]> {
    return loaderFor(
      ctx,
      'tender.awards',
      () => new DataLoader<Tender, Award[], string>((tenders) => new AwardService(ctx.em, ctx.principal).ofTenders(tenders), { cacheKeyFn: (t) => t.id }),
    ).load(tender);
  }

  @FieldResolver(() => Boolean, { description: 'Whether the caller is the buyer.' })
  isBuyer(@Root() tender: Tender, @Ctx() ctx: SubgraphContext): boolean {
    return service(ctx).isBuyer(tender);
  }

  @FieldResolver(() => [ID], { nullable: true, description: 'SELECTIVE: the invited vendor ids, shown to the buyer only.' })
  invitedVendorIds(@Root() tender: Tender, @Ctx() ctx: SubgraphContext): string[] | null {
    return service(ctx).isBuyer(tender) ? tender.invitedVendorIds : null;
  }
}
