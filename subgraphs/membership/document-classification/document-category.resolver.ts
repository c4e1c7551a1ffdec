import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { DocumentCategory } from './document-category.entity.js';
import { DocumentCategoryRule } from './document-category-rule.entity.js';
import { CreateDocumentCategoryArgs, DocumentCategoriesArgs, UpdateDocumentCategoryArgs } from './document-classification.inputs.js';
import { DocumentCategoryPage } from './document-category-page.js';
import { DocumentClassificationService } from './document-classification.service.js';
import { DocumentCategoryNotFoundError } from './document-classification.errors.js';

// Editing categories needs no zero-shot provider: only classify() uses it.
const service = new DocumentClassificationService();
const scopeOf = (ctx: SubgraphContext) => ({ accountId: ctx.principal.accountId, mode: ctx.principal.mode });

@Resolver(() => DocumentCategory)
export class DocumentCategoryResolver {
  @Query(() => DocumentCategoryPage, { description: "The account's document categories with their rules, oldest first (the defaults are made on first use), a page at a time like every list." })
  documentCategories(@Args(() => DocumentCategoriesArgs) args: DocumentCategoriesArgs, @Ctx() ctx: SubgraphContext): Promise<DocumentCategoryPage> {
    return service.pageCategories(ctx.em, scopeOf(ctx), args);
  }

  @Query(() => DocumentCategory, { nullable: true })
  async documentCategory(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<DocumentCategory | null> {
    try {
      return await service.category(ctx.em, scopeOf(ctx), id);
    } catch (error) {
      // A lookup answers null for what is not there (REST makes that a 404); other failures stay errors.
      if (error instanceof DocumentCategoryNotFoundError) return null;
      throw error;
    }
  }

  @Mutation(() => DocumentCategory, { description: 'Creates a category; a name already used (in any case) is 409.' })
  createDocumentCategory(@Args(() => CreateDocumentCategoryArgs) args: CreateDocumentCategoryArgs, @Ctx() ctx: SubgraphContext): Promise<DocumentCategory> {
    return service.createCategory(ctx.em, scopeOf(ctx), args);
  }

  @Mutation(() => DocumentCategory, { description: 'Renames a category and/or replaces its rules.' })
  updateDocumentCategory(@Args(() => UpdateDocumentCategoryArgs) args: UpdateDocumentCategoryArgs, @Ctx() ctx: SubgraphContext): Promise<DocumentCategory> {
    return service.updateCategory(ctx.em, scopeOf(ctx), args.id, args);
  }

  @Mutation(() => DocumentCategory, { description: 'Deletes a category and its rules, answering what was deleted; documents keep the category name they were filed under.' })
  deleteDocumentCategory(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<DocumentCategory> {
    return service.deleteCategory(ctx.em, scopeOf(ctx), id);
  }

  @FieldResolver(() => [DocumentCategoryRule])
  async rules(@Root() category: DocumentCategory): Promise<DocumentCategoryRule[]> {
    // Every service method answers categories with their rules loaded; this is the fallback.
    if (!category.rules.isInitialized()) await category.rules.init();
    return category.rules.getItems();
  }
}
