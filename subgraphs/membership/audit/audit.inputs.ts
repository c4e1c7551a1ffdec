import { IsOptional, Length } from 'class-validator';
import { ArgsType, Field, ID } from '../../shared/type-graphql.js';
import { PageArgs } from '../../shared/page.args.js';

@ArgsType()
export class AuditEventsArgs extends PageArgs {
  @Field(() => String, { nullable: true, description: 'member, member_category, invoice, payment or refund.' })
  @IsOptional()
  @Length(1, 32)
  entity?: string | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  entityId?: string | null;
}
