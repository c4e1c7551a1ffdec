import { ArrayMaxSize, IsEmail, IsEnum, IsOptional, IsUUID, Length, ValidateNested } from 'class-validator';
import { ArgsType, Field, ID } from '../../shared/type-graphql.js';
import { PageArgs } from '../../shared/page.args.js';
import { ApplicationAnswer } from './application-answer.js';
import { JobApplicationStage, JobApplicationStatus } from './job-application-status.js';

@ArgsType()
export class ApplyToJobArgs {
  @Field(() => ID, { description: 'The job posting.' })
  id!: string;

  @Field(() => ID, { nullable: true, description: 'A member applying; else give name and email.' })
  @IsOptional()
  @IsUUID(undefined, { message: 'memberId must be a member id' })
  memberId?: string | null;

  @Field(() => String, { nullable: true, description: "An outside candidate's name." })
  @IsOptional()
  @Length(1, 200)
  name?: string | null;

  @Field(() => String, { nullable: true, description: "An outside candidate's email." })
  @IsOptional()
  @IsEmail(undefined, { message: 'email must be an email address' })
  @Length(3, 320)
  email?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 20000)
  coverLetter?: string | null;

  @Field(() => [ApplicationAnswer], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  answers?: ApplicationAnswer[] | null;

  @Field(() => ID, { nullable: true, description: 'A document (membership subgraph) holding the resume.' })
  @IsOptional()
  @IsUUID(undefined, { message: 'resumeDocumentId must be a document id' })
  resumeDocumentId?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 50000)
  resumeText?: string | null;

  @Field(() => [String], { nullable: true, description: 'Up to 50 skills; stored lower-case and deduplicated.' })
  @IsOptional()
  @ArrayMaxSize(50)
  @Length(1, 60, { each: true })
  skills?: string[] | null;
}

@ArgsType()
export class JobApplicantsArgs extends PageArgs {
  @Field(() => ID, { description: 'The job posting.' })
  id!: string;

  @Field(() => JobApplicationStatus, { nullable: true })
  @IsOptional()
  @IsEnum(JobApplicationStatus)
  status?: JobApplicationStatus | null;

  @Field(() => JobApplicationStage, { nullable: true })
  @IsOptional()
  @IsEnum(JobApplicationStage)
  stage?: JobApplicationStage | null;
}

@ArgsType()
export class MoveJobApplicationArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => JobApplicationStage)
  stage!: JobApplicationStage;
}

@ArgsType()
export class RejectJobApplicationArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'Why; kept with the application and in its trail.' })
  @Length(1, 2000)
  reason!: string;
}

@ArgsType()
export class HireJobApplicationArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => Boolean, { nullable: true, description: 'Also mark the posting filled (default false).' })
  @IsOptional()
  fillPosting?: boolean | null;
}
