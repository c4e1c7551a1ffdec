import DataLoader from 'dataloader';
import { Args, Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { CategoryService } from '../category/category.service.js';
import { MemberCategory } from '../category/member-category.entity.js';
import { DeletedMember } from './deleted-member.js';
import type { MemberBillingContext } from './member-billing.js';
import type { MembershipSettingsContext } from './membership-settings.js';
import { Member } from './member.entity.js';
import { CreateMemberArgs, MembersArgs, UpdateMemberArgs } from './member.inputs.js';
import { MemberPage } from './member-page.js';
import { MemberService } from './member.service.js';

const service = (ctx: SubgraphContext) => new MemberService(ctx.em, ctx.principal);

@Resolver(() => Member)
export class MemberResolver {
  @Query(() => MemberPage, { description: 'Members of the account; newest first unless `sort` says otherwise.' })
  members(@Args(() => MembersArgs) args: MembersArgs, @Ctx() ctx: SubgraphContext & MembershipSettingsContext): Promise<MemberPage> {
    return service(ctx).list(args, ctx.membershipSettings);
  }

  @Query(() => Member, { nullable: true })
  member(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Member | null> {
    return service(ctx).read(id);
  }

  @FieldResolver(() => MemberCategory, { nullable: true })
  category(@Root() member: Member, @Ctx() ctx: SubgraphContext): MemberCategory | null | Promise<MemberCategory | null> {
    // Null as a value, not a promise: a row whose fields are all values is completed as it is,
    // one with a promise among them waits on every field (graphql-js's promiseForObject).
    if (!member.categoryId) return null;
    const loader = loaderFor(ctx, 'memberCategory.byId', () => new DataLoader<string, MemberCategory | null>((ids) => new CategoryService(ctx.em, ctx.principal).findMany(ids)));
    return loader.load(member.categoryId);
  }

  @Mutation(() => Member)
  createMember(@Args(() => CreateMemberArgs) args: CreateMemberArgs, @Ctx() ctx: SubgraphContext & MemberBillingContext): Promise<Member> {
    return service(ctx).create(args, ctx.memberBilling);
  }

  @Mutation(() => Member)
  updateMember(@Args(() => UpdateMemberArgs) args: UpdateMemberArgs, @Ctx() ctx: SubgraphContext): Promise<Member> {
    return service(ctx).update(args);
  }

  @Mutation(() => DeletedMember)
  deleteMember(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<DeletedMember> {
    return service(ctx).archive(id);
  }

  @Mutation(() => Member, { description: 'Adds one period of the category and invoices its fee.' })
  renewMember(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext & MemberBillingContext): Promise<Member> {
    return service(ctx).renew(id, ctx.memberBilling);
  }

  @Mutation(() => Member, { description: 'PENDING → current, e.g. when the first fee was waived or paid elsewhere.' })
  activateMember(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Member> {
    return service(ctx).transition(id, 'activate');
  }

  @Mutation(() => Member, { description: 'ACTIVE, GRACE or LAPSED → SUSPENDED.' })
  suspendMember(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Member> {
    return service(ctx).transition(id, 'suspend');
  }

  @Mutation(() => Member, { description: 'SUSPENDED → current (ACTIVE, GRACE or LAPSED by its dates).' })
  reinstateMember(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Member> {
    return service(ctx).transition(id, 'reinstate');
  }

  @Mutation(() => Member, { description: 'Any status but CANCELLED → CANCELLED, which is final.' })
  cancelMember(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Member> {
    return service(ctx).transition(id, 'cancel');
  }
}
