import { ObjectType } from '../../../shared/type-graphql.js';
import { PageOf } from '../../../shared/page.type.js';
import { Invoice } from './invoice.entity.js';

/** One page of invoices, newest first. */
@ObjectType()
export class InvoicePage extends PageOf(Invoice) {}
