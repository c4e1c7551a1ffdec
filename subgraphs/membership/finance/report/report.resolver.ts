import { Args, Ctx, Query, Resolver } from '../../../shared/type-graphql.js';
import type { SubgraphContext } from '../../../shared/context.js';
import { FinanceReport } from './finance-report.js';
import { financeReportToCsv } from './report-csv.js';
import { FinanceReportArgs } from './report.inputs.js';
import { ReportService } from './report.service.js';

@Resolver()
export class ReportResolver {
  @Query(() => FinanceReport, { description: 'Finance report for a window of days, per currency, by month and by member category.' })
  financeReport(@Args(() => FinanceReportArgs) args: FinanceReportArgs, @Ctx() ctx: SubgraphContext): Promise<FinanceReport> {
    return new ReportService(ctx.em, ctx.principal).report(args);
  }

  @Query(() => String, { description: 'The same report as CSV text (GET /finance/reports?format=csv over REST).' })
  async financeReportCsv(@Args(() => FinanceReportArgs) args: FinanceReportArgs, @Ctx() ctx: SubgraphContext): Promise<string> {
    return financeReportToCsv(await new ReportService(ctx.em, ctx.principal).report(args));
  }
}
