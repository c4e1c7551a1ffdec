import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { CreateMemberCategoryArgs, MemberCategoriesArgs, UpdateMemberCategoryArgs } from './category.inputs.js';
import { DeletedMemberCategory } from './deleted-member-category.js';
import { CategoryService } from './category.service.js';
import { MemberCategory } from './member-category.entity.js';
import { MemberCategoryPage } from './member-category-page.js';

const service = (ctx: SubgraphContext) => new CategoryService(ctx.em, ctx.principal);

@Resolver(() => MemberCategory)
export class CategoryResolver {
  @Query(() => MemberCategoryPage, { description: 'Member categories, newest first.' })
  memberCategories(@Args(() => MemberCategoriesArgs) args: MemberCategoriesArgs, @Ctx() ctx: SubgraphContext): Promise<MemberCategoryPage> {
    return service(ctx).list(args);
  }

  @Query(() => MemberCategory, { nullable: true })
  memberCategory(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<MemberCategory | null> {
    return service(ctx).find(id);
  }

  @Mutation(() => MemberCategory)
  createMemberCategory(@Args(() => CreateMemberCategoryArgs) args: CreateMemberCategoryArgs, @Ctx() ctx: SubgraphContext): Promise<MemberCategory> {
    return service(ctx).create(args);
  }

  @Mutation(() => MemberCategory, { description: 'Renames a category or changes its fee, currency, grace or renewal window (its period and renewal rule are fixed).' })
  updateMemberCategory(@Args(() => UpdateMemberCategoryArgs) args: UpdateMemberCategoryArgs, @Ctx() ctx: SubgraphContext): Promise<MemberCategory> {
    return service(ctx).update(args);
  }

  @Mutation(() => DeletedMemberCategory, { description: 'Deletes a category that no member and no invoice names (409 category_in_use otherwise).' })
  deleteMemberCategory(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<DeletedMemberCategory> {
    return service(ctx).delete(id);
  }
}
