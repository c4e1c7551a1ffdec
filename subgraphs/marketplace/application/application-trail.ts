import { Field, ObjectType } from '../../shared/type-graphql.js';
import { DateTimeResolver } from '../../shared/scalars.js';

/** One move of an application, as the marketplace audit recorded it. */
@ObjectType({ description: 'A change of an application: from and to as status.stage, when and by which key.' })
export class ApplicationTrailEntry {
  @Field(() => String, { nullable: true, description: 'e.g. active.applied; null for the application itself.' })
  from!: string | null;

  @Field(() => String, { description: 'e.g. active.screening, rejected.interview.' })
  to!: string;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => String, { description: 'Id of the API key that made the change.' })
  actor!: string;

  @Field(() => DateTimeResolver)
  at!: Date;
}
