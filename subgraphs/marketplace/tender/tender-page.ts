import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { Tender } from './tender.entity.js';

@ObjectType()
export class TenderPage extends PageOf(Tender) {}
