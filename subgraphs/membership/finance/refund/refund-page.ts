import { ObjectType } from '../../../shared/type-graphql.js';
import { PageOf } from '../../../shared/page.type.js';
import { Refund } from './refund.entity.js';

/** One page of refunds, newest first. */
@ObjectType()
export class RefundPage extends PageOf(Refund) {}
