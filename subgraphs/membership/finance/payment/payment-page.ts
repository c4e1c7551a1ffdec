import { ObjectType } from '../../../shared/type-graphql.js';
import { PageOf } from '../../../shared/page.type.js';
import { Payment } from './payment.entity.js';

/** One page of payments, newest first. */
@ObjectType()
export class PaymentPage extends PageOf(Payment) {}
