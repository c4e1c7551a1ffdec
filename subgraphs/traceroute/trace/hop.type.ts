import { Field, Float, Int, ObjectType } from '../../shared/type-graphql.js';

/** One hop as stored in the trace's `hops` jsonb: snake_case, the REST and export names; GraphQL shows them camelCase. */
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
}

/** One hop of a traceroute: who answered, the RTT of each probe packet, and where that is. */
@ObjectType('Hop', { description: 'One hop (TTL) of a traceroute, enriched with geo and AS data.' })
export class HopType implements HopData {
  @Field(() => Int, { description: 'TTL of the probe packets; 255 is the final hop marker of RIPE Atlas.' })
  hop!: number;

  @Field(() => String, { nullable: true, description: 'The address that answered most; null when nothing answered.' })
  ip!: string | null;

  @Field(() => String, { nullable: true })
  hostname!: string | null;

  @Field(() => [Float], { nullable: 'items', description: 'RTT of each packet sent (ms); null for a packet with no answer.' })
  rtts!: (number | null)[];

  @Field(() => Float, { name: 'rttAvg', nullable: true })
  rtt_avg!: number | null;

  @Field(() => Int)
  sent!: number;

  @Field(() => Int)
  received!: number;

  @Field(() => Float, { description: 'Share of packets without an answer, 0.0 to 1.0.' })
  loss!: number;

  @Field(() => Int, { description: 'Answers that arrived after the probe stopped waiting (RIPE `late`).' })
  late!: number;

  @Field(() => [String], { description: 'ICMP errors reported (RIPE `err`: N, H, A, P, p or a code).' })
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
}
