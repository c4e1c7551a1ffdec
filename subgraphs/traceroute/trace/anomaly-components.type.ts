import { Field, Float, ObjectType } from '../../shared/type-graphql.js';

/** The parts of an anomaly score, each 0.0 to 1.0, as stored (snake_case jsonb, the REST names); GraphQL shows them camelCase. */
export interface AnomalyData {
  rtt_inflation: number;
  as_path_change: number;
  new_asn: number;
  leaves_country: number;
  loss: number;
  incomplete: number;
  baseline_rtt_ms: number | null;
  baseline_samples: number;
}

@ObjectType('AnomalyComponents', { description: 'Why a trace scored as it did: each component 0.0 to 1.0, and the baseline it was compared with.' })
export class AnomalyComponentsType implements AnomalyData {
  @Field(() => Float, { name: 'rttInflation', description: 'RTT to the target against the baseline of the same probe and target: 0 at 1.2x or less, 1 at 3x or more.' })
  rtt_inflation!: number;

  @Field(() => Float, { name: 'asPathChange', description: 'Share of the usual AS path that changed (Jaccard distance).' })
  as_path_change!: number;

  @Field(() => Float, { name: 'newAsn', description: '1 when an ASN never seen on this probe-target path appears.' })
  new_asn!: number;

  @Field(() => Float, { name: 'leavesCountry', description: '1 when a path between two Pakistani points crosses a foreign country.' })
  leaves_country!: number;

  @Field(() => Float, { description: 'Share of probe packets without an answer.' })
  loss!: number;

  @Field(() => Float, { description: '1 when the target never answered; 0.5 when trailing hops were all silent.' })
  incomplete!: number;

  @Field(() => Float, { name: 'baselineRttMs', nullable: true })
  baseline_rtt_ms!: number | null;

  @Field(() => Float, { name: 'baselineSamples' })
  baseline_samples!: number;
}
