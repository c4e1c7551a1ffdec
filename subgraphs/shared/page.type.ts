import { Field, ObjectType, type ClassType } from './type-graphql.js';

/**
 * The GraphQL shape of every cursor-paged list: `data`, `hasMore`, `nextCursor` (the Page<T>
 * that pagination.ts returns). Each list declares its named type as
 * `@ObjectType() class MemberPage extends PageOf(Member) {}` and adds only what is its own.
 */
export function PageOf<T extends object>(item: ClassType<T>) {
  // Abstract and never returned itself: type-graphql emits only the named subclasses.
  @ObjectType()
  abstract class Page {
    @Field(() => [item])
    data!: T[];

    @Field(() => Boolean, { description: 'Whether another page follows.' })
    hasMore!: boolean;

    @Field(() => String, { nullable: true, description: 'Where the next page starts: pass it back to continue; null on the last page.' })
    nextCursor!: string | null;
  }
  return Page;
}
