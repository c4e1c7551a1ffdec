import { Field, ObjectType } from '../../shared/type-graphql.js';

/** The source that says it, stored with the trace: snake_case like the hops; GraphQL shows it camelCase. */
export interface ProvenanceData {
  probe_country: string | null;
  probe_city: string | null;
  probe_coordinates: string | null;
  probe_asn: string | null;
  target_location: string | null;
  target_asn: string | null;
  hop_location: string | null;
  hop_asn: string | null;
}

/** Where each enriched figure of a trace came from, so a reader knows what a 2013 trace's ASNs mean. */
@ObjectType('TraceProvenance', {
  description: 'Where each enriched figure of the trace came from: "source metadata" (what the measurement file said at the time) or a database and the date it was built (e.g. "GeoLite2 City 2026-06-17"); null where the figure is unknown.',
})
export class TraceProvenanceType implements ProvenanceData {
  @Field(() => String, { name: 'probeCountry', nullable: true })
  probe_country!: string | null;

  @Field(() => String, { name: 'probeCity', nullable: true })
  probe_city!: string | null;

  @Field(() => String, { name: 'probeCoordinates', nullable: true, description: 'probeLatitude and probeLongitude.' })
  probe_coordinates!: string | null;

  @Field(() => String, { name: 'probeAsn', nullable: true, description: 'probeAsn (its name is always the ASN database\'s).' })
  probe_asn!: string | null;

  @Field(() => String, { name: 'targetLocation', nullable: true, description: 'targetCountry, targetCity and its coordinates.' })
  target_location!: string | null;

  @Field(() => String, { name: 'targetAsn', nullable: true })
  target_asn!: string | null;

  @Field(() => String, { name: 'hopLocation', nullable: true, description: 'The country, city and coordinates of the hops and their responders.' })
  hop_location!: string | null;

  @Field(() => String, { name: 'hopAsn', nullable: true, description: 'The ASNs of the hops and their responders, and so the AS path after the probe.' })
  hop_asn!: string | null;
}
