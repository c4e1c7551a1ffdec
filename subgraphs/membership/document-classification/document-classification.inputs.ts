import { ArrayMaxSize, IsOptional, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { ArgsType, Field, Float, ID, InputType } from '../../shared/type-graphql.js';
import { PageArgs } from '../../shared/page.args.js';
import { DocumentRuleKind } from './document-rule-kind.js';

export const MAX_RULES_PER_CATEGORY = 20;

@InputType({ description: 'A matching rule; see DocumentRuleKind.' })
export class DocumentCategoryRuleInput {
  @Field(() => DocumentRuleKind)
  kind!: DocumentRuleKind;

  @Field(() => String, { description: 'Words (ANY, ALL), a phrase (EXACT, FUZZY) or a regular expression (REGEX).' })
  @Length(1, 500)
  pattern!: string;

  @Field(() => Boolean, { nullable: true, description: 'Defaults to false: matching ignores case.' })
  @IsOptional()
  caseSensitive?: boolean | null;

  @Field(() => Float, { nullable: true, description: 'FUZZY only: least similarity, above 0 and at most 1 (default 0.8).' })
  @IsOptional()
  @Min(0)
  @Max(1)
  threshold?: number | null;
}

@ArgsType()
export class CreateDocumentCategoryArgs {
  @Field(() => String)
  @Length(1, 100)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @Field(() => [DocumentCategoryRuleInput], { nullable: true, description: 'The rules that assign the category (none by default; at most 20).' })
  @IsOptional()
  @ArrayMaxSize(MAX_RULES_PER_CATEGORY)
  @ValidateNested({ each: true })
  rules?: DocumentCategoryRuleInput[] | null;
}

@ArgsType()
export class UpdateDocumentCategoryArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true, description: 'A new name; documents already filed keep the name they were filed under.' })
  @IsOptional()
  @Length(1, 100)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string | null;

  @Field(() => [DocumentCategoryRuleInput], { nullable: true, description: "Replaces the category's rules when given ([] removes them all)." })
  @IsOptional()
  @ArrayMaxSize(MAX_RULES_PER_CATEGORY)
  @ValidateNested({ each: true })
  rules?: DocumentCategoryRuleInput[] | null;
}

@ArgsType()
export class DocumentCategoriesArgs extends PageArgs {}
