import { ArrayMaxSize, IsOptional, IsPositive, IsUUID, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { DateTimeResolver } from '../../shared/scalars.js';
import { PageArgs } from '../../shared/page.args.js';
import { ArgsType, Field, Float, ID, InputType, Int } from '../../shared/type-graphql.js';
import { AwardCriteria, ProcurementMethod, TenderStatus } from './tender-status.js';

const CURRENCY = /^[A-Z]{3}$/;

@InputType({ description: 'An amount in a currency (OCDS Value).' })
export class ValueInput {
  @Field(() => Float)
  @IsPositive()
  @Max(1e15)
  amount!: number;

  @Field(() => String, { description: 'ISO 4217 code, e.g. EUR.' })
  @Matches(CURRENCY, { message: 'currency must be an ISO 4217 code such as EUR' })
  currency!: string;
}

@InputType()
export class PeriodInput {
  @Field(() => DateTimeResolver, { nullable: true })
  @IsOptional()
  startDate?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true })
  @IsOptional()
  endDate?: Date | null;
}

@InputType()
export class WeightsInput {
  @Field(() => Int)
  @Min(0)
  @Max(100)
  price!: number;

  @Field(() => Int)
  @Min(0)
  @Max(100)
  quality!: number;
}

@InputType()
export class LotInput {
  @Field(() => String)
  @Length(1, 200)
  title!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 5000)
  description?: string | null;

  @Field(() => Float, { description: "The lot's budget, in the tender's currency." })
  @IsPositive()
  @Max(1e15)
  amount!: number;
}

@ArgsType()
export class CreateTenderArgs {
  @Field(() => String)
  @Length(1, 200)
  @Matches(/\S/, { message: 'title must not be blank' })
  title!: string;

  @Field(() => String)
  @Length(1, 20000)
  description!: string;

  @Field(() => ValueInput, { description: 'The budget; no bid may exceed it.' })
  @ValidateNested()
  value!: ValueInput;

  // Nullable without a schema default: type-graphql would publish the enum's name as the default
  // value, which graphql-js then hands to the resolver as is. The service applies OPEN and PRICE_ONLY.
  @Field(() => ProcurementMethod, { nullable: true, description: 'OPEN when left out.' })
  @IsOptional()
  procurementMethod?: ProcurementMethod | null;

  @Field(() => AwardCriteria, { nullable: true, description: 'PRICE_ONLY when left out.' })
  @IsOptional()
  awardCriteria?: AwardCriteria | null;

  @Field(() => WeightsInput, { nullable: true, description: 'Required for RATED_CRITERIA: price and quality weights summing to 100.' })
  @IsOptional()
  @ValidateNested()
  weights?: WeightsInput | null;

  @Field(() => [LotInput], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  lots?: LotInput[] | null;

  @Field(() => PeriodInput, { description: 'endDate is the deadline for bids (required, in the future).' })
  @ValidateNested()
  tenderPeriod!: PeriodInput;

  @Field(() => PeriodInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  awardPeriod?: PeriodInput | null;

  @Field(() => [ID], { nullable: true, description: 'Document ids (membership documents).' })
  @IsOptional()
  @ArrayMaxSize(50)
  @IsUUID(undefined, { each: true, message: 'documents must be document ids' })
  documents?: string[] | null;

  @Field(() => [ID], { nullable: true, description: 'SELECTIVE only: the vendor ids invited to bid.' })
  @IsOptional()
  @ArrayMaxSize(500)
  @IsUUID(undefined, { each: true, message: 'invitedVendorIds must be vendor ids' })
  invitedVendorIds?: string[] | null;

  @Field(() => Boolean, { defaultValue: false, description: 'Publish at once (status ACTIVE) instead of saving a draft.' })
  publish!: boolean;
}

/** A change of terms: every field optional; on an ACTIVE tender it invalidates the bids placed. */
@ArgsType()
export class UpdateTenderArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  title?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 20000)
  description?: string | null;

  @Field(() => ValueInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  value?: ValueInput | null;

  @Field(() => AwardCriteria, { nullable: true })
  @IsOptional()
  awardCriteria?: AwardCriteria | null;

  @Field(() => WeightsInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  weights?: WeightsInput | null;

  @Field(() => [LotInput], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  lots?: LotInput[] | null;

  @Field(() => PeriodInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  tenderPeriod?: PeriodInput | null;

  @Field(() => [ID], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(50)
  @IsUUID(undefined, { each: true, message: 'documents must be document ids' })
  documents?: string[] | null;

  @Field(() => [ID], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(500)
  @IsUUID(undefined, { each: true, message: 'invitedVendorIds must be vendor ids' })
  invitedVendorIds?: string[] | null;
}

@ArgsType()
export class TendersArgs extends PageArgs {
  @Field(() => TenderStatus, { nullable: true })
  @IsOptional()
  status?: TenderStatus | null;

  @Field(() => Boolean, { nullable: true, description: "true: the caller's own tenders only (as buyer)." })
  @IsOptional()
  mine?: boolean | null;
}

@ArgsType()
export class CancelTenderArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  @Length(1, 2000)
  @Matches(/\S/, { message: 'reason must not be blank' })
  reason!: string;
}

