import { DateTimeResolver } from '../../shared/scalars.js';
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
  asName!: string | null;

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
  byDirection!: TraceCountType[];

  @Field(() => [TraceCountType])
  byStatus!: TraceCountType[];

  @Field(() => [TraceCountType], { description: 'Traces per tenth of anomaly score: 0.0-0.1 ... 0.9-1.0 (1.0 in the last).' })
  anomalyDistribution!: TraceCountType[];

  @Field(() => [AsnCountType], { description: 'The 10 probe ASNs with most traces.' })
  topAsns!: AsnCountType[];

  @Field(() => [CityCountType], { description: 'The 10 probe cities with most traces.' })
  topProbeCities!: CityCountType[];

  @Field(() => [CityCountType], { description: 'The 10 target cities with most traces.' })
  topTargetCities!: CityCountType[];

  @Field(() => [HourCountType], { description: 'Traces per hour of measurement, hours with none omitted.' })
  perHour!: HourCountType[];
}
