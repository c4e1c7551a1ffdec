import { IsOptional } from 'class-validator';
import { ArgsType, Field, ID } from '../../shared/type-graphql.js';
import { PageArgs } from '../../shared/page.args.js';

@ArgsType()
export class JobMatchesArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: 'Rank open postings for this member.' })
  @IsOptional()
  memberId?: string | null;

  @Field(() => ID, { nullable: true, description: "Rank the account's members for this posting." })
  @IsOptional()
  jobId?: string | null;
}
