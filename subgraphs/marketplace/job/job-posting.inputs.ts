import { ArrayMaxSize, IsEnum, IsOptional, IsUUID, Length, Matches, Max, Min } from 'class-validator';
import { DateTimeResolver } from '../../shared/scalars.js';
import { EmploymentType, JobPostingStatus } from './job-posting-status.js';
import { ArgsType, Field, ID, Int } from '../../shared/type-graphql.js';
import { PageArgs } from '../../shared/page.args.js';

@ArgsType()
export class CreateJobPostingArgs {
  @Field(() => String)
  @Length(1, 200)
  @Matches(/\S/, { message: 'title must not be blank' })
  title!: string;

  @Field(() => String)
  @Length(1, 20000)
  description!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  location?: string | null;

  @Field(() => ID, { description: 'The id of the member who posts the job.' })
  @IsUUID(undefined, { message: 'postedBy must be a member id' })
  postedBy!: string;

  @Field(() => JobPostingStatus, { nullable: true, description: 'draft or open (default open).' })
  @IsOptional()
  @IsEnum(JobPostingStatus)
  status?: JobPostingStatus | null;

  @Field(() => [String], { nullable: true, description: 'Up to 50 skills; stored lower-case and deduplicated.' })
  @IsOptional()
  @ArrayMaxSize(50)
  @Length(1, 60, { each: true })
  skills?: string[] | null;

  @Field(() => Boolean, { nullable: true, description: 'Default false.' })
  @IsOptional()
  remote?: boolean | null;

  @Field(() => EmploymentType, { nullable: true })
  @IsOptional()
  @IsEnum(EmploymentType)
  employmentType?: EmploymentType | null;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(0)
  @Max(1_000_000_000)
  salaryMin?: number | null;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(0)
  @Max(1_000_000_000)
  salaryMax?: number | null;

  @Field(() => String, { nullable: true, description: 'ISO 4217, e.g. EUR; required with a salary.' })
  @IsOptional()
  @Matches(/^[A-Za-z]{3}$/, { message: 'salaryCurrency must be an ISO 4217 code' })
  salaryCurrency?: string | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'When the posting closes by itself; must be in the future.' })
  @IsOptional()
  closesAt?: Date | null;
}

@ArgsType()
export class CloseJobPostingArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 2000)
  reason?: string | null;
}

@ArgsType()
export class JobPostingsArgs extends PageArgs {}
