import { batchedReference } from '../../shared/reference.js';
import type { UsageRecord } from './usage-record.entity.js';
import { UsageService } from './usage.service.js';

/** Usage record references from other subgraphs, scoped like the lists: one statement per request. */
export const usageRecordReference = batchedReference<UsageRecord>('usage-record.byId', (ctx, ids) =>
  new UsageService(ctx.em).findMany(ctx.principal, ids),
);
