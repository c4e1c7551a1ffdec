import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { Member } from './member.entity.js';

/** One page of members, newest first, with the cursor of the next page. */
@ObjectType()
export class MemberPage extends PageOf(Member) {}
