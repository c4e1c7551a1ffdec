import type { SubgraphContext } from '../../shared/context.js';
import { NotTenderBuyerError } from '../tender/tender.errors.js';
import { TenderService } from '../tender/tender.service.js';
import { bidCounts, bidCountTopic } from './bid.service.js';
import type { TenderBidCount } from './bid.types.js';

/** Starts listening at once: the pubsub's iterator adds its listener only on its first next(). */
function listenNow<T>(iterable: AsyncIterable<T>): AsyncIterator<T> {
  const iterator = iterable[Symbol.asyncIterator]();
  let first: Promise<IteratorResult<T>> | undefined = iterator.next();
  return {
    next: () => {
      const pending = first ?? iterator.next();
      first = undefined;
      return pending;
    },
    return: (value?: unknown) => iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
  };
}

/**
 * The stream behind `tenderBidCount`: the buyer's only, the current count first and then one
 * event per placed or withdrawn bid. Counts carry no amount, vendor or document.
 */
export async function tenderBidCountStream(tenderId: string, context: SubgraphContext): Promise<AsyncIterableIterator<TenderBidCount>> {
  const tenders = new TenderService(context.em.fork(), context.principal);
  const tender = await tenders.get(tenderId);
  if (!tenders.isBuyer(tender)) throw new NotTenderBuyerError('follow its bid count');
  const source = listenNow(context.pubsub.subscribe(bidCountTopic(context.principal.mode, tender.id)));
  const [initial] = await bidCounts(context.em.fork(), [tender.id]);

  async function* deliver(): AsyncGenerator<TenderBidCount> {
    try {
      yield { tenderId: tender.id, count: initial };
      for (let step = await source.next(); !step.done; step = await source.next()) yield step.value as TenderBidCount;
    } finally {
      await source.return?.();
    }
  }
  return deliver();
}
