import { Field, ObjectType } from '../../shared/type-graphql.js';
import { Vendor } from './vendor.entity.js';

@ObjectType()
export class VendorPage {
  @Field(() => [Vendor])
  data!: Vendor[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
