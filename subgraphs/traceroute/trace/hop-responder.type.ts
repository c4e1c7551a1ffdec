import { Field, Float, Int, ObjectType } from '../../shared/type-graphql.js';

/** One address that answered at a hop, as stored in the hop's `responders`. */
export interface HopResponderData {
  ip: string;
  hostname: string | null;
  rtts: number[];
  rtt_avg: number | null;
  received: number;
  errors: string[];
  private: boolean;
  ixp: string | null;
  country: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  asn: number | null;
  as_name: string | null;
  mpls: number[];
}

/** One address that answered at a hop with its own answers and where it is (load-balanced hops have several). */
@ObjectType('HopResponder', { description: 'An address that answered at a hop, with its own answers, RTTs and enrichment.' })
export class HopResponderType implements HopResponderData {
  @Field(() => String)
  ip!: string;

  @Field(() => String, { nullable: true })
  hostname!: string | null;

  @Field(() => [Float], { description: 'RTT of each of its answers (ms), in probe order.' })
  rtts!: number[];

  @Field(() => Float, { name: 'rttAvg', nullable: true })
  rtt_avg!: number | null;

  @Field(() => Int, { description: 'Probes it answered.' })
  received!: number;

  @Field(() => [String], { description: 'Its ICMP errors, in the words of Hop.errors.' })
  errors!: string[];

  @Field(() => Boolean)
  private!: boolean;

  @Field(() => String, { nullable: true, description: 'The Internet exchange whose peering LAN holds the address.' })
  ixp!: string | null;

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

  @Field(() => [Int], { description: 'MPLS labels from its ICMP extensions (RFC 4950).' })
  mpls!: number[];
}
