import { Field, Float, Int, ObjectType } from '../../shared/type-graphql.js';
import { StrayReplyKind } from './stray-reply-kind.js';

/** A stray reply as stored in a hop's `stray_replies`. */
export interface StrayReplyData {
  kind: StrayReplyKind;
  ip: string | null;
  rtt: number | null;
  late_by: number | null;
  destination: string | null;
  err: string | null;
}

/** An answer kept apart: never the hop's address, never received, never in the RTT figures or in `sent`. */
@ObjectType('StrayReply', { description: 'An answer a hop keeps apart from its probes: late, duplicate or for another destination.' })
export class StrayReplyType implements StrayReplyData {
  @Field(() => StrayReplyKind)
  kind!: StrayReplyKind;

  @Field(() => String, { nullable: true })
  ip!: string | null;

  @Field(() => Float, { nullable: true, description: 'As the source gives it (ms); a late answer has none.' })
  rtt!: number | null;

  @Field(() => Int, { name: 'lateBy', nullable: true, description: 'How many probes earlier the answered probe was (RIPE `late`).' })
  late_by!: number | null;

  @Field(() => String, { nullable: true, description: 'Where the packet that drew the answer was addressed (RIPE `edst`).' })
  destination!: string | null;

  @Field(() => String, { nullable: true, description: 'Its ICMP error, in the words of Hop.errors.' })
  err!: string | null;
}
