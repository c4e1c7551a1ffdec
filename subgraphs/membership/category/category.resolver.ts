import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { CreateMemberCategoryArgs, MemberCategoriesArgs } from './category.inputs.js';
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
}
