import DataLoader from 'dataloader';
import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../../shared/type-graphql.js';
import { loaderFor, type SubgraphContext } from '../../../shared/context.js';
import { Invoice } from '../invoice/invoice.entity.js';
import { InvoiceService } from '../invoice/invoice.service.js';
import { Payment } from './payment.entity.js';
import { CreatePaymentArgs, PaymentsArgs } from './payment.inputs.js';
import { PaymentPage } from './payment-page.js';
import { PaymentService } from './payment.service.js';

const service = (ctx: SubgraphContext) => new PaymentService(ctx.em, ctx.principal);

@Resolver(() => Payment)
export class PaymentResolver {
  @Query(() => PaymentPage, { description: 'Payments, newest first.' })
  payments(@Args(() => PaymentsArgs) args: PaymentsArgs, @Ctx() ctx: SubgraphContext): Promise<PaymentPage> {
    return service(ctx).list(args);
  }

  @Query(() => Payment, { nullable: true })
  payment(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Payment | null> {
    return service(ctx).find(id);
  }

  @FieldResolver(() => Invoice)
  invoice(@Root() payment: Payment, @Ctx() ctx: SubgraphContext): Promise<Invoice | null> {
    const loader = loaderFor(ctx, 'invoice.byId', () => new DataLoader<string, Invoice | null>((ids) => new InvoiceService(ctx.em, ctx.principal).findMany(ids)));
    return loader.load(payment.invoiceId);
  }

  @Mutation(() => Payment, { description: 'Records a payment against an OPEN or UNCOLLECTIBLE invoice; at most what it owes.' })
  createPayment(@Args(() => CreatePaymentArgs) args: CreatePaymentArgs, @Ctx() ctx: SubgraphContext): Promise<Payment> {
    return service(ctx).create(args);
  }
}
