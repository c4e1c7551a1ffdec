import { ArrayMaxSize, IsEmail, IsOptional, Length, Matches } from 'class-validator';
import { PageArgs } from '../../shared/page.args.js';
import { ArgsType, Field, ID } from '../../shared/type-graphql.js';
import { VendorStatus } from './vendor-status.js';

@ArgsType()
export class RegisterVendorArgs {
  @Field(() => String)
  @Length(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @Field(() => String, { description: 'ISO 3166-1 alpha-2, e.g. DE.' })
  @Matches(/^[A-Z]{2}$/, { message: 'country must be an ISO 3166-1 alpha-2 code such as DE' })
  country!: string;

  @Field(() => String, { description: 'The company registration number.' })
  @Length(1, 64)
  @Matches(/\S/, { message: 'registrationNumber must not be blank' })
  registrationNumber!: string;

  @Field(() => String)
  @IsEmail({}, { message: 'contactEmail must be an email address' })
  @Length(3, 254)
  contactEmail!: string;

  @Field(() => [String], { defaultValue: [], description: 'What the vendor supplies (e.g. CPV codes or free labels).' })
  @ArrayMaxSize(50)
  @Length(1, 100, { each: true })
  categories!: string[];
}

@ArgsType()
export class VendorsArgs extends PageArgs {
  @Field(() => VendorStatus, { nullable: true })
  @IsOptional()
  status?: VendorStatus | null;
}

@ArgsType()
export class QualifyVendorArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => VendorStatus, { description: 'APPROVED or SUSPENDED.' })
  status!: VendorStatus;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 2000)
  reason?: string | null;
}
