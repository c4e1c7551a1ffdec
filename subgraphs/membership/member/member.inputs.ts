import { ArrayMaxSize, IsEmail, IsOptional, Length, Matches, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from '../../shared/type-graphql.js';
import { JSONObjectResolver } from 'graphql-scalars';
import { LocalDateResolver } from '../../shared/scalars.js';
import { MemberStatus } from './member-status.js';
import { MemberSort } from './member-sort.js';
import { MAX_PAGE_SIZE } from '../../shared/pagination.js';

// Arguments are flat, not wrapped in an input object: the REST bridge then reads a create or
// update body `{"name": ..., "email": ...}` straight into them.

const PHONE = /^\+?[0-9 ()\-.]{3,40}$/;
const COUNTRY = /^[A-Za-z]{2}$/;

/** Profile fields that create and update share. */
@ArgsType()
export class MemberProfileArgs {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @Matches(PHONE, { message: 'phone must be a telephone number' })
  phone?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  addressLine1?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  addressLine2?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 100)
  city?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 100)
  region?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 20)
  postalCode?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 3166-1 alpha-2, e.g. DE.' })
  @IsOptional()
  @Matches(COUNTRY, { message: 'country must be an ISO 3166-1 alpha-2 code' })
  country?: string | null;

  @Field(() => String, { nullable: true, description: 'A one-line professional summary.' })
  @IsOptional()
  @Length(1, 200)
  headline?: string | null;

  @Field(() => [String], { nullable: true, description: 'Up to 50 skills of up to 60 characters; stored lower-case and deduplicated.' })
  @IsOptional()
  @ArrayMaxSize(50)
  @Length(1, 60, { each: true })
  skills?: string[] | null;

  @Field(() => JSONObjectResolver, { nullable: true, description: 'Up to 50 fields; values are strings, numbers, booleans or null.' })
  @IsOptional()
  customFields?: Record<string, unknown> | null;
}

@ArgsType()
export class CreateMemberArgs extends MemberProfileArgs {
  @Field(() => String)
  @Length(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @Field(() => String)
  @IsEmail({}, { message: 'email must be a valid email address' })
  @Length(3, 320)
  email!: string;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Defaults to today.' })
  @IsOptional()
  joinedOn?: string | null;

  @Field(() => ID, {
    nullable: true,
    description: 'The member category. With a fee the member starts PENDING with an open invoice for the first period.',
  })
  @IsOptional()
  categoryId?: string | null;
}

@ArgsType()
export class UpdateMemberArgs extends MemberProfileArgs {
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

  @Field(() => ID, { nullable: true, description: 'Moves the member to another category from its next renewal on.' })
  @IsOptional()
  categoryId?: string | null;
}

@ArgsType()
export class MembersArgs {
  @Field(() => MemberStatus, { nullable: true })
  status?: MemberStatus | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  categoryId?: string | null;

  @Field(() => String, { nullable: true, description: 'Matches name or email, case-insensitively.' })
  @IsOptional()
  @Length(1, 200)
  search?: string | null;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Joined on or after this date.' })
  @IsOptional()
  joinedFrom?: string | null;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Joined on or before this date.' })
  @IsOptional()
  joinedTo?: string | null;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Period ends on or after this date.' })
  @IsOptional()
  expiringFrom?: string | null;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Period ends on or before this date.' })
  @IsOptional()
  expiringTo?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'true: members due for renewal, ACTIVE or GRACE with a period ending within the renewal reminder lead time (MEMBER_RENEWAL_REMINDER_DAYS); false: every other member.',
  })
  @IsOptional()
  renewalDue?: boolean | null;

  @Field(() => MemberSort, { nullable: true, description: 'Defaults to CREATED_AT_DESC (newest first).' })
  @IsOptional()
  sort?: MemberSort | null;

  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_SIZE}; default 20.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true, description: 'The nextCursor of the previous page (same sort).' })
  @IsOptional()
  after?: string | null;
}
