import { Field, Float, Int, ObjectType } from '../../shared/type-graphql.js';
import { HopResponderType, type HopResponderData } from './hop-responder.type.js';
import { StrayReplyType, type StrayReplyData } from './stray-reply.type.js';

/**
 * One hop as stored in the trace's `hops` jsonb: snake_case, the REST and export names; GraphQL
 * shows them camelCase. The fields from `responders` on are absent from hops stored before they
 * were recorded.
 */
export interface HopData {
  hop: number;
  ip: string | null;
  hostname: string | null;
  rtts: (number | null)[];
  rtt_avg: number | null;
  sent: number;
  received: number;
  loss: number;
  late: number;
  errors: string[];
  private: boolean;
  country: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  asn: number | null;
  as_name: string | null;
  mpls: number[];
  ixp?: string | null;
  responders?: HopResponderData[];
  duplicates?: number;
  other_destination?: number;
  stray_replies?: StrayReplyData[];
}

/** One hop of a traceroute: who answered, the RTT of each probe packet, and where that is. */
@ObjectType('Hop', { description: 'One hop (TTL) of a traceroute, enriched with geo and AS data.' })
export class HopType implements HopData {
  @Field(() => Int, { description: 'TTL of the probe packets; 255 is the final hop marker of RIPE Atlas.' })
  hop!: number;

  @Field(() => String, { nullable: true, description: 'The address that answered most (the first of equals); null when nothing answered. Every address that answered is in responders.' })
  ip!: string | null;

  @Field(() => String, { nullable: true })
  hostname!: string | null;

  @Field(() => [Float], { nullable: 'items', description: 'RTT of each probe sent (ms), whoever answered; null for a probe with no answer. Stray replies are not here.' })
  rtts!: (number | null)[];

  @Field(() => Float, { name: 'rttAvg', nullable: true, description: 'Mean RTT of the answers from ip (ms); every responder has its own.' })
  rtt_avg!: number | null;

  @Field(() => Int, { description: 'Probes sent at this TTL, as the source records them (RIPE: one per answer or timeout that is no duplicate, late or edst answer; scamper: attempts and probe ids, unanswered probes included).' })
  sent!: number;

  @Field(() => Int, { description: 'Probes answered in time, by any responder.' })
  received!: number;

  @Field(() => Float, { description: 'Share of probes without an answer, 0.0 to 1.0 (1 when none was sent).' })
  loss!: number;

  @Field(() => Int, { description: 'Late answers (RIPE `late`): answers to earlier probes, set apart in strayReplies.' })
  late!: number;

  @Field(() => [String], {
    description:
      'ICMP errors of the answers counted here and the hop\'s send errors, in RIPE Atlas\'s words for both sources: N network unreachable, H host unreachable, A administratively prohibited, P protocol unreachable, p port unreachable, h beyond scope, other letters as the source gives them, a number for another unreachable code, `icmp <type>/<code>` for another ICMP type. Port unreachable from the target is how a UDP trace arrives and is no error.',
  })
  errors!: string[];

  @Field(() => Boolean, { description: 'The address is private, shared, loopback or otherwise not routed.' })
  private!: boolean;

  @Field(() => String, { nullable: true })
  country!: string | null;

  @Field(() => String, { nullable: true })
  city!: string | null;

  @Field(() => Float, { nullable: true })
  latitude!: number | null;

  @Field(() => Float, { nullable: true })
  longitude!: number | null;

  @Field(() => Int, { nullable: true })
  asn!: number | null;

  @Field(() => String, { name: 'asName', nullable: true })
  as_name!: string | null;

  @Field(() => [Int], { description: 'MPLS labels from ICMP extensions (RFC 4950).' })
  mpls!: number[];

  @Field(() => String, { nullable: true, description: 'The Internet exchange whose peering LAN holds ip: the AS path does not attribute this hop. Null on hops stored before it was recorded.' })
  ixp?: string | null;

  @Field(() => [HopResponderType], { nullable: true, description: 'Every address that answered in time, most answers first. Null on hops stored before responders were recorded.' })
  responders?: HopResponderData[];

  @Field(() => Int, { nullable: true, description: 'Duplicate answers (RIPE `dup`), set apart in strayReplies.' })
  duplicates?: number;

  @Field(() => Int, { name: 'otherDestination', nullable: true, description: 'Answers for another destination (RIPE `edst`), set apart in strayReplies.' })
  other_destination?: number;

  @Field(() => [StrayReplyType], { name: 'strayReplies', nullable: true, description: 'Late, duplicate and other-destination answers, in the order the source lists them.' })
  stray_replies?: StrayReplyData[];
}
