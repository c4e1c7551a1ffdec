import { ADMIN } from '../../shared/authorization.js';
import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { Vendor } from './vendor.entity.js';
import { QualifyVendorArgs, RegisterVendorArgs, VendorsArgs } from './vendor.inputs.js';
import { VendorPage } from './vendor-page.js';
import { VendorService } from './vendor.service.js';

const service = (ctx: SubgraphContext) => new VendorService(ctx.em, ctx.principal);

@Resolver(() => Vendor)
export class VendorResolver {
  @Query(() => VendorPage, { description: 'The vendor registry of this mode, newest first.' })
  vendors(@Args(() => VendorsArgs) args: VendorsArgs, @Ctx() ctx: SubgraphContext): Promise<VendorPage> {
    return service(ctx).list(args);
  }

  @Query(() => Vendor, { nullable: true })
  vendor(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Vendor | null> {
    return service(ctx).find(id);
  }

  @Query(() => Vendor, { nullable: true, description: "The caller's own vendor profile in this mode, if registered." })
  myVendor(@Ctx() ctx: SubgraphContext): Promise<Vendor | null> {
    return service(ctx).mine();
  }

  @Mutation(() => Vendor, { description: "Registers the caller's account (in this mode) as a vendor, status PENDING." })
  registerVendor(@Args(() => RegisterVendorArgs) args: RegisterVendorArgs, @Ctx() ctx: SubgraphContext): Promise<Vendor> {
    return service(ctx).register(args);
  }

  @Authorized(ADMIN)
  @Mutation(() => Vendor, { description: 'Admin keys only: approves or suspends a vendor (pending → approved → suspended → approved).' })
  qualifyVendor(@Args(() => QualifyVendorArgs) args: QualifyVendorArgs, @Ctx() ctx: SubgraphContext): Promise<Vendor> {
    return service(ctx).qualify(args);
  }

  @FieldResolver(() => String, { nullable: true, description: "Shown to the vendor's own account (and admin keys) only." })
  contactEmail(@Root() vendor: Vendor, @Ctx() ctx: SubgraphContext): string | null {
    const own = vendor.accountId === ctx.principal.accountId && vendor.mode === ctx.principal.mode;
    return own || ctx.principal.kind === 'admin' ? vendor.contactEmail : null;
  }
}
