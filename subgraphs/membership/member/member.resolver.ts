import { Args, Arg, Ctx, ID, Mutation, Query, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { DeletedMember } from './deleted-member.js';
import { Member } from './member.entity.js';
import { CreateMemberArgs, MembersArgs, UpdateMemberArgs } from './member.inputs.js';
import { MemberPage } from './member-page.js';
import { MemberService } from './member.service.js';

const service = (ctx: SubgraphContext) => new MemberService(ctx.em, ctx.principal);

@Resolver(() => Member)
export class MemberResolver {
  @Query(() => MemberPage, { description: 'Members of the account, newest first.' })
  members(@Args(() => MembersArgs) args: MembersArgs, @Ctx() ctx: SubgraphContext): Promise<MemberPage> {
    return service(ctx).list(args);
  }

  @Query(() => Member, { nullable: true })
  member(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Member | null> {
    return service(ctx).find(id);
  }

  @Mutation(() => Member)
  createMember(@Args(() => CreateMemberArgs) args: CreateMemberArgs, @Ctx() ctx: SubgraphContext): Promise<Member> {
    return service(ctx).create(args);
  }

  @Mutation(() => Member)
  updateMember(@Args(() => UpdateMemberArgs) args: UpdateMemberArgs, @Ctx() ctx: SubgraphContext): Promise<Member> {
    return service(ctx).update(args);
  }

  @Mutation(() => DeletedMember)
  deleteMember(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<DeletedMember> {
    return service(ctx).archive(id);
  }

  @Mutation(() => Member, { description: 'Extends the membership by one period.' })
  renewMember(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Member> {
    return service(ctx).renew(id);
  }
}
