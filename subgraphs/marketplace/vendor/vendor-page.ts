import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { Vendor } from './vendor.entity.js';

@ObjectType()
export class VendorPage extends PageOf(Vendor) {}
