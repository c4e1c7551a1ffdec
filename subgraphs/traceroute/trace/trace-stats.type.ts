import { DateTimeResolver } from 'graphql-scalars';
import { Field, Int, ObjectType } from '../../shared/type-graphql.js';

@ObjectType('TraceCount')
export class TraceCountType {
  @Field(() => String)
  key!: string;

  @Field(() => Int)
  count!: number;
}

@ObjectType('AsnCount')
export class AsnCountType {
  @Field(() => Int)
  asn!: number;

  @Field(() => String, { nullable: true })
  as_name!: string | null;

  @Field(() => Int)
  count!: number;
}

@ObjectType('CityCount')
export class CityCountType {
  @Field(() => String)
  city!: string;

  @Field(() => String, { nullable: true })
  country!: string | null;

  @Field(() => Int)
  count!: number;
}

@ObjectType('HourCount')
export class HourCountType {
  @Field(() => DateTimeResolver)
  hour!: Date;

  @Field(() => Int)
  count!: number;
}

/** Aggregates over a window of measurement time. */
@ObjectType('TraceStats')
export class TraceStatsType {
  @Field(() => DateTimeResolver)
  since!: Date;

  @Field(() => DateTimeResolver)
  until!: Date;

  @Field(() => Int)
  total!: number;

  @Field(() => [TraceCountType])
  by_direction!: TraceCountType[];

  @Field(() => [TraceCountType])
  by_status!: TraceCountType[];

  @Field(() => [TraceCountType], { description: 'Traces per tenth of anomaly score: 0.0-0.1 ... 0.9-1.0 (1.0 in the last).' })
  anomaly_distribution!: TraceCountType[];

  @Field(() => [AsnCountType], { description: 'The 10 probe ASNs with most traces.' })
  top_asns!: AsnCountType[];

  @Field(() => [CityCountType], { description: 'The 10 probe cities with most traces.' })
  top_probe_cities!: CityCountType[];

  @Field(() => [CityCountType], { description: 'The 10 target cities with most traces.' })
  top_target_cities!: CityCountType[];

  @Field(() => [HourCountType], { description: 'Traces per hour of measurement, hours with none omitted.' })
  per_hour!: HourCountType[];
}
