import { ArrayMaxSize, IsOptional, IsPositive, IsUUID, Length, Matches, Max } from 'class-validator';
import { PageArgs } from '../../shared/page.args.js';
import { ArgsType, Field, Float, ID } from '../../shared/type-graphql.js';

@ArgsType()
export class PlaceBidArgs {
  @Field(() => ID, { description: 'The tender.' })
  id!: string;

  @Field(() => ID, { nullable: true, description: 'The lot, required when the tender has lots.' })
  @IsOptional()
  lotId?: string | null;

  @Field(() => Float)
  @IsPositive()
  @Max(1e15)
  amount!: number;

  @Field(() => String)
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code such as EUR' })
  currency!: string;

  @Field(() => [ID], { defaultValue: [] })
  @ArrayMaxSize(50)
  @IsUUID(undefined, { each: true, message: 'documents must be document ids' })
  documents!: string[];

  @Field(() => [String], { defaultValue: [], description: 'Answers to the quality criteria (RATED_CRITERIA).' })
  @ArrayMaxSize(50)
  @Length(0, 5000, { each: true })
  qualityAnswers!: string[];
}

@ArgsType()
export class AmendBidArgs {
  @Field(() => ID, { description: 'The bid.' })
  id!: string;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @IsPositive()
  @Max(1e15)
  amount?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code such as EUR' })
  currency?: string | null;

  @Field(() => [ID], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(50)
  @IsUUID(undefined, { each: true, message: 'documents must be document ids' })
  documents?: string[] | null;

  @Field(() => [String], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(50)
  @Length(0, 5000, { each: true })
  qualityAnswers?: string[] | null;
}

@ArgsType()
export class TenderBidsArgs extends PageArgs {
  @Field(() => ID, { description: 'The tender.' })
  id!: string;
}

@ArgsType()
export class BidReceiptArgs {
  @Field(() => ID, { description: 'The receipt.' })
  id!: string;

  @Field(() => String, { nullable: true, description: 'The hash the vendor kept, to check against.' })
  @IsOptional()
  @Matches(/^[0-9a-f]{64}$/, { message: 'sha256 must be 64 lowercase hex digits' })
  sha256?: string | null;
}
