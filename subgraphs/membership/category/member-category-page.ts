import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { MemberCategory } from './member-category.entity.js';

/** One page of categories, newest first. */
@ObjectType()
export class MemberCategoryPage extends PageOf(MemberCategory) {}
