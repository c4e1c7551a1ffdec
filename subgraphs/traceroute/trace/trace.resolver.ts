import { ADMIN } from '../../shared/authorization.js';
import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { TraceImportReportType } from './import-report.type.js';
import { Trace } from './trace.entity.js';
import { TracesArgs, TraceStatsArgs } from './trace.inputs.js';
import { TracePage } from './trace-page.js';
import { TraceRecordType } from './trace-record.type.js';
import { TraceService } from './trace.service.js';
import { TraceStatsType } from './trace-stats.type.js';

const service = (ctx: SubgraphContext) => new TraceService(ctx.em);

@Resolver(() => Trace)
export class TraceResolver {
  @Query(() => TracePage, { description: 'Traces, newest measurement first, with the public API filters.' })
  traces(@Args(() => TracesArgs) args: TracesArgs, @Ctx() ctx: SubgraphContext): Promise<TracePage> {
    return service(ctx).list(args);
  }

  @Query(() => Trace, { nullable: true, description: 'One trace with its hops; null for an unknown or malformed id.' })
  trace(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Trace | null> {
    return service(ctx).find(id);
  }

  @Query(() => TraceRecordType, {
    nullable: true,
    description: "A trace's measurement record exactly as it was imported (RIPE Atlas result or scamper trace, as JSON text); null for an unknown id, NOT_FOUND (record_not_kept) for a trace that has none.",
  })
  traceRecord(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<TraceRecordType | null> {
    return service(ctx).record(id);
  }

  @Query(() => TraceStatsType, { description: 'Counts by direction and status, anomaly distribution, top ASNs and cities, traces per hour.' })
  traceStats(@Args(() => TraceStatsArgs) args: TraceStatsArgs, @Ctx() ctx: SubgraphContext): Promise<TraceStatsType> {
    return service(ctx).stats(args);
  }

  @Authorized(ADMIN)
  @Mutation(() => TraceImportReportType, {
    description: 'Admin: imports RIPE Atlas results (JSON array, JSON lines or {results: [...]}) or scamper2 JSON lines, at most 1 MiB (larger files: the command-line import).',
  })
  importTraces(@Arg('content', () => String) content: string, @Ctx() ctx: SubgraphContext): Promise<TraceImportReportType> {
    return service(ctx).import(content);
  }
}
