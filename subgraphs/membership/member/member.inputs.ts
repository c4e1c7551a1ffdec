import { IsEmail, IsOptional, Length, Matches, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from '../../shared/type-graphql.js';
import { LocalDateResolver } from 'graphql-scalars';
import { MemberStatus } from './member-status.js';
import { MAX_PAGE_SIZE } from '../../shared/pagination.js';

// Arguments are flat, not wrapped in an input object: the REST bridge then reads a create or
// update body `{"name": ..., "email": ...}` straight into them.

@ArgsType()
export class CreateMemberArgs {
  @Field(() => String)
  @Length(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @Field(() => String)
  @IsEmail({}, { message: 'email must be a valid email address' })
  @Length(3, 320)
  email!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Matches(/^\+?[0-9 ()\-.]{3,40}$/, { message: 'phone must be a telephone number' })
  phone?: string | null;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Defaults to today.' })
  @IsOptional()
  joinedOn?: string | null;
}

@ArgsType()
export class UpdateMemberArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsEmail({}, { message: 'email must be a valid email address' })
  @Length(3, 320)
  email?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Matches(/^\+?[0-9 ()\-.]{3,40}$/, { message: 'phone must be a telephone number' })
  phone?: string | null;
}

@ArgsType()
export class MembersArgs {
  @Field(() => MemberStatus, { nullable: true })
  status?: MemberStatus | null;

  @Field(() => String, { nullable: true, description: 'Matches name or email, case-insensitively.' })
  @IsOptional()
  @Length(1, 200)
  search?: string | null;

  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_SIZE}; default 20.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true, description: 'The nextCursor of the previous page.' })
  @IsOptional()
  after?: string | null;
}
