import { IsIn, IsOptional, Length, Matches, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from '../../shared/type-graphql.js';
import { CategoryPeriod, RenewalBasis } from './category-period.js';
import { PageArgs } from '../../shared/page.args.js';

@ArgsType()
export class CreateMemberCategoryArgs {
  @Field(() => String)
  @Length(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @Field(() => Int, { description: 'Fee per period in minor units (0 for a free category).' })
  @Min(0)
  @Max(100_000_000)
  feeAmount!: number;

  @Field(() => String, { description: 'ISO 4217 code, e.g. EUR.' })
  @Matches(/^[A-Za-z]{3}$/, { message: 'currency must be a three-letter ISO 4217 code' })
  currency!: string;

  @Field(() => CategoryPeriod)
  @IsIn(Object.values(CategoryPeriod))
  period!: CategoryPeriod;

  @Field(() => Int, { nullable: true, description: 'Required with EVERY_N_YEARS: 2 to 99.' })
  @IsOptional()
  @Min(2)
  @Max(99)
  periodYears?: number | null;

  @Field(() => RenewalBasis, { nullable: true, description: 'Defaults to ROLLING.' })
  @IsOptional()
  renewalBasis?: RenewalBasis | null;

  @Field(() => Int, { nullable: true, description: 'Required with FIXED: month of the fixed date, 1-12.' })
  @IsOptional()
  @Min(1)
  @Max(12)
  fixedMonth?: number | null;

  @Field(() => Int, { nullable: true, description: 'Required with FIXED: day of the fixed date, 1-28.' })
  @IsOptional()
  @Min(1)
  @Max(28)
  fixedDay?: number | null;

  @Field(() => Int, { nullable: true, description: 'Defaults to 0.' })
  @IsOptional()
  @Min(0)
  @Max(366)
  graceDays?: number | null;

  @Field(() => Int, { nullable: true, description: 'Days before the period end from which an active member may renew, 0-366; defaults to 30.' })
  @IsOptional()
  @Min(0)
  @Max(366)
  renewalWindowDays?: number | null;
}

@ArgsType()
export class MemberCategoriesArgs extends PageArgs {}

/**
 * What a category's owner may change: its name, fee, currency, grace and renewal window. Its period and renewal
 * rule shape its members' periods, so they are fixed; a new category serves a new rule.
 */
@ArgsType()
export class UpdateMemberCategoryArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string | null;

  @Field(() => Int, { nullable: true, description: 'Fee per period in minor units, for invoices made from now on.' })
  @IsOptional()
  @Min(0)
  @Max(100_000_000)
  feeAmount?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Matches(/^[A-Za-z]{3}$/, { message: 'currency must be a three-letter ISO 4217 code' })
  currency?: string | null;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(0)
  @Max(366)
  graceDays?: number | null;

  @Field(() => Int, { nullable: true, description: 'Days before the period end from which an active member may renew, 0-366; defaults to 30.' })
  @IsOptional()
  @Min(0)
  @Max(366)
  renewalWindowDays?: number | null;
}
