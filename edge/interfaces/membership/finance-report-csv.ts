import type { ApolloServer } from '@apollo/server';
import type { NextFunction, Request, Response } from 'express';
import type { ExecutionResult } from 'graphql';
import type { EdgeContext } from '../../../core/edge-context.js';
import { apiErrorFromGraphQL, sendApiError } from '../../rest/api-error.js';
import { membershipErrorFormat } from './membership.error-body.js';

const CSV_QUERY = 'query FinanceReportCsv($from: LocalDate!, $to: LocalDate!) { financeReportCsv(from: $from, to: $to) }';

/**
 * `GET /finance/reports?format=csv`: the one REST answer that is not JSON. It runs the graph's
 * `financeReportCsv` (the same report as `financeReport`, rendered as CSV by the subgraph) with
 * the request's principal and sends it as text/csv; every other request passes on to the bridge,
 * which serves the JSON report. Mount it after the edge guard, before the bridge.
 */
export function financeReportCsv(options: { basePath: string; apollo: ApolloServer<EdgeContext> }) {
  const path = `${options.basePath}/finance/reports`;
  return (req: Request, res: Response, next: NextFunction): void => {
    const format = typeof req.query.format === 'string' ? req.query.format.toLowerCase() : '';
    if (req.method !== 'GET' || req.path.replace(/\/+$/, '') !== path || format !== 'csv') return next();
    const variables = { from: req.query.from, to: req.query.to };
    options.apollo
      .executeOperation({ query: CSV_QUERY, variables }, { contextValue: { principal: req.principal!, requestId: String(req.id) } })
      .then((response) => {
        if (response.body.kind !== 'single') throw new Error('Incremental delivery is not used for CSV reports');
        const result = response.body.singleResult as ExecutionResult<{ financeReportCsv: string }>;
        if (result.errors?.length || !result.data) {
          sendApiError(res, membershipErrorFormat, apiErrorFromGraphQL(result.errors ?? []), String(req.id));
          return;
        }
        res.status(200);
        res.setHeader('content-type', 'text/csv; charset=utf-8');
        res.setHeader('content-disposition', `attachment; filename="finance-report-${String(variables.from)}-${String(variables.to)}.csv"`);
        res.end(result.data.financeReportCsv);
      })
      .catch(next);
  };
}
