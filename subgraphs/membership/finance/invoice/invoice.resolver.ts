import DataLoader from 'dataloader';
import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../../shared/type-graphql.js';
import { loaderFor, type SubgraphContext } from '../../../shared/context.js';
import { Member } from '../../member/member.entity.js';
import { MemberService } from '../../member/member.service.js';
import { DeletedInvoice } from './deleted-invoice.js';
import { Invoice } from './invoice.entity.js';
import { CreateInvoiceArgs, InvoicesArgs } from './invoice.inputs.js';
import { InvoicePage } from './invoice-page.js';
import { InvoiceService } from './invoice.service.js';

const service = (ctx: SubgraphContext) => new InvoiceService(ctx.em, ctx.principal);

/** Members of a request's invoices and payments, archived ones included, one statement per request. */
export function memberLoader(ctx: SubgraphContext): DataLoader<string, Member | null> {
  return loaderFor(ctx, 'member.byIdWithArchived', () => new DataLoader<string, Member | null>((ids) => new MemberService(ctx.em, ctx.principal).findMany(ids)));
}

@Resolver(() => Invoice)
export class InvoiceResolver {
  @Query(() => InvoicePage, { description: 'Invoices, newest first; filter by status, member, issue date, overdue.' })
  invoices(@Args(() => InvoicesArgs) args: InvoicesArgs, @Ctx() ctx: SubgraphContext): Promise<InvoicePage> {
    return service(ctx).list(args);
  }

  @Query(() => Invoice, { nullable: true })
  invoice(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Invoice | null> {
    return service(ctx).find(id);
  }

  @FieldResolver(() => Member, { nullable: true, description: 'The member invoiced (also when archived since).' })
  member(@Root() invoice: Invoice, @Ctx() ctx: SubgraphContext): Promise<Member | null> {
    return memberLoader(ctx).load(invoice.memberId);
  }

  @Mutation(() => Invoice, { description: 'Creates an invoice, OPEN (numbered) unless status DRAFT is asked for.' })
  createInvoice(@Args(() => CreateInvoiceArgs) args: CreateInvoiceArgs, @Ctx() ctx: SubgraphContext): Promise<Invoice> {
    return service(ctx).create(args);
  }

  @Mutation(() => Invoice, { description: 'DRAFT → OPEN, with the next number.' })
  finalizeInvoice(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Invoice> {
    return service(ctx).finalize(id);
  }

  @Mutation(() => Invoice, { description: 'OPEN or UNCOLLECTIBLE → VOID. A paid invoice cannot be voided.' })
  voidInvoice(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Invoice> {
    return service(ctx).void(id);
  }

  @Mutation(() => Invoice, { description: 'OPEN → UNCOLLECTIBLE.' })
  markInvoiceUncollectible(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Invoice> {
    return service(ctx).markUncollectible(id);
  }

  @Mutation(() => DeletedInvoice, { description: 'Deletes a DRAFT; finalised invoices are never deleted.' })
  deleteInvoice(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<DeletedInvoice> {
    return service(ctx).deleteDraft(id);
  }
}
