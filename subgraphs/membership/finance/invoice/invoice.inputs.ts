import { ArrayMaxSize, ArrayMinSize, IsOptional, Length, Matches, ValidateNested } from 'class-validator';
import { LocalDateResolver } from '../../../shared/scalars.js';
import { ArgsType, Field, ID, registerEnumType } from '../../../shared/type-graphql.js';
import { InvoiceLineInput } from './invoice-line.js';
import { InvoiceStatus } from './invoice-status.js';
import { PageArgs } from '../../../shared/page.args.js';

/** The states an invoice may be created in. */
export enum NewInvoiceStatus {
  DRAFT = 'draft',
  OPEN = 'open',
}

registerEnumType(NewInvoiceStatus, { name: 'NewInvoiceStatus' });

@ArgsType()
export class CreateInvoiceArgs {
  @Field(() => ID)
  memberId!: string;

  @Field(() => String, { description: 'ISO 4217, e.g. EUR.' })
  @Matches(/^[A-Za-z]{3}$/, { message: 'currency must be a three-letter ISO 4217 code' })
  currency!: string;

  @Field(() => [InvoiceLineInput])
  @ArrayMinSize(1, { message: 'lines must have at least one line' })
  @ArrayMaxSize(100, { message: 'lines may have at most 100 lines' })
  @ValidateNested({ each: true })
  lines!: InvoiceLineInput[];

  @Field(() => LocalDateResolver, { nullable: true, description: 'Defaults to 30 days after the invoice is finalised.' })
  @IsOptional()
  dueOn?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 500)
  description?: string | null;

  @Field(() => NewInvoiceStatus, { nullable: true, description: 'OPEN (default) finalises and numbers it at once; DRAFT keeps it editable.' })
  @IsOptional()
  status?: NewInvoiceStatus | null;
}

@ArgsType()
export class InvoicesArgs extends PageArgs {
  @Field(() => InvoiceStatus, { nullable: true })
  @IsOptional()
  status?: InvoiceStatus | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  memberId?: string | null;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Issued on or after this date.' })
  @IsOptional()
  issuedFrom?: string | null;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Issued on or before this date.' })
  @IsOptional()
  issuedTo?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Only OPEN invoices past their due date (true), or not (false).' })
  @IsOptional()
  overdue?: boolean | null;
}
