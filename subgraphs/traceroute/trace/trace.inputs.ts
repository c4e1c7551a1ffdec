import { IsIn, IsIP, IsOptional, Length, Matches, Max, Min } from 'class-validator';
import { DateTimeResolver } from '../../shared/scalars.js';
import { ArgsType, Field, Float, Int } from '../../shared/type-graphql.js';
import { TraceDirection } from './trace-direction.js';
import { DEFAULT_SEARCH_HOURS, DEFAULT_STATS_HOURS, DEFAULT_TRACE_PAGE_SIZE, MAX_ASN, MAX_HOURS, MAX_OFFSET, MAX_TRACE_PAGE_SIZE } from './trace-limits.js';
import { TraceProtocol } from './trace-protocol.js';
import { TraceStatus } from './trace-status.js';

/** The filters the search, the export and the stats share: the spec's, camelCase (REST keeps the spec's snake_case). */
@ArgsType()
export class TraceFilterArgs {
  @Field(() => TraceDirection, { nullable: true })
  direction?: TraceDirection | null;

  @Field(() => String, { nullable: true, description: 'Probe city, whole name, any case.' })
  @IsOptional()
  @Length(1, 200)
  probeCity?: string | null;

  @Field(() => String, { nullable: true, description: 'Probe country, ISO 3166-1 alpha-2.' })
  @IsOptional()
  @Matches(/^[A-Za-z]{2}$/, { message: 'probeCountry must be a two-letter country code' })
  probeCountry?: string | null;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(0)
  @Max(MAX_ASN)
  probeAsn?: number | null;

  @Field(() => String, { nullable: true, description: 'Part of the target domain (case-insensitive).' })
  @IsOptional()
  @Length(1, 253)
  targetDomain?: string | null;

  @Field(() => String, { nullable: true, description: 'Target IP address, exact (an IPv6 address in any spelling).' })
  @IsOptional()
  @IsIP(undefined, { message: 'targetIp must be an IPv4 or IPv6 address' })
  targetIp?: string | null;

  @Field(() => String, { nullable: true, description: 'Target city, whole name, any case.' })
  @IsOptional()
  @Length(1, 200)
  targetCity?: string | null;

  @Field(() => Float, { nullable: true, description: 'Minimum anomaly score, 0.0 to 1.0.' })
  @IsOptional()
  @Min(0)
  @Max(1)
  minAnomaly?: number | null;

  @Field(() => TraceStatus, { nullable: true })
  status?: TraceStatus | null;

  @Field(() => Int, { nullable: true, description: 'RIPE Atlas measurement id.' })
  @IsOptional()
  @Min(0)
  @Max(MAX_ASN)
  msmId?: number | null;

  @Field(() => Int, { nullable: true, description: 'RIPE Atlas probe id.' })
  @IsOptional()
  @Min(0)
  @Max(MAX_ASN)
  probeId?: number | null;

  @Field(() => Int, { nullable: true, description: 'IP version of the trace: 4 or 6.' })
  @IsOptional()
  @IsIn([4, 6], { message: 'af must be 4 or 6' })
  af?: number | null;

  @Field(() => TraceProtocol, { nullable: true })
  protocol?: TraceProtocol | null;

  @Field(() => Int, { nullable: true, description: "The target's ASN." })
  @IsOptional()
  @Min(0)
  @Max(MAX_ASN)
  targetAsn?: number | null;

  @Field(() => String, { nullable: true, description: 'Traces that pass through this address: it answered in time at some hop (an IPv6 address in any spelling).' })
  @IsOptional()
  @IsIP(undefined, { message: 'hopIp must be an IPv4 or IPv6 address' })
  hopIp?: string | null;

  @Field(() => Int, { nullable: true, description: 'Traces that pass through this AS: an address of it answered in time at some hop.' })
  @IsOptional()
  @Min(0)
  @Max(MAX_ASN)
  hopAsn?: number | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Window start, inclusive (ISO date-time); when given, hours does not apply and the window may be of any length.' })
  since?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Window end, exclusive (ISO date-time); default now.' })
  until?: Date | null;
}

@ArgsType()
export class TracesArgs extends TraceFilterArgs {
  @Field(() => Int, { nullable: true, description: `The last N hours before until; default ${DEFAULT_SEARCH_HOURS}, maximum ${MAX_HOURS}.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_HOURS)
  hours?: number | null;

  @Field(() => Int, { nullable: true, description: `Page number, default 1; page × limit at most ${MAX_OFFSET} (use cursor beyond).` })
  @IsOptional()
  @Min(1)
  page?: number | null;

  @Field(() => Int, { nullable: true, description: `Results per page, default ${DEFAULT_TRACE_PAGE_SIZE}, maximum ${MAX_TRACE_PAGE_SIZE}.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_TRACE_PAGE_SIZE)
  limit?: number | null;

  @Field(() => Boolean, { nullable: true, description: 'Include hop details; default false.' })
  includeHops?: boolean | null;

  @Field(() => String, { nullable: true, description: 'nextCursor of the previous page: keyset paging to any depth.' })
  @IsOptional()
  @Length(1, 200)
  cursor?: string | null;
}

@ArgsType()
export class TraceStatsArgs extends TraceFilterArgs {
  @Field(() => Int, { nullable: true, description: `The last N hours before until; default ${DEFAULT_STATS_HOURS}, maximum ${MAX_HOURS}.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_HOURS)
  hours?: number | null;
}
