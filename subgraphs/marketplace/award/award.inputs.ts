import { ArrayMaxSize, IsOptional, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { ArgsType, Field, Float, ID, InputType } from '../../shared/type-graphql.js';

@InputType({ description: "The buyer's quality score of one bid, 0 to 100." })
export class QualityScoreInput {
  @Field(() => ID)
  bidId!: string;

  @Field(() => Float)
  @Min(0)
  @Max(100)
  score!: number;
}

@ArgsType()
export class AwardTenderArgs {
  @Field(() => ID, { description: 'The tender.' })
  id!: string;

  @Field(() => ID, { nullable: true, description: 'The bid to award; the best valid bid of the lot when left out. It must be the best.' })
  @IsOptional()
  bidId?: string | null;

  @Field(() => ID, { nullable: true, description: "The lot (tenders with lots); the bid's lot when a bid is named." })
  @IsOptional()
  lotId?: string | null;

  @Field(() => [QualityScoreInput], { nullable: true, description: "RATED_CRITERIA: a quality score for every valid bid of the lot." })
  @IsOptional()
  @ArrayMaxSize(10000)
  @ValidateNested({ each: true })
  qualityScores?: QualityScoreInput[] | null;
}

@ArgsType()
export class CancelAwardArgs {
  @Field(() => ID, { description: 'The tender.' })
  id!: string;

  @Field(() => ID, { nullable: true, description: 'The lot (tenders with lots).' })
  @IsOptional()
  lotId?: string | null;

  @Field(() => String)
  @Length(1, 2000)
  @Matches(/\S/, { message: 'reason must not be blank' })
  reason!: string;
}
