import type { Bid } from '../bid/bid.entity.js';
import type { BidScore } from './award.entity.js';

/** Price only: lowest amount first; an earlier bid wins a tie. */
export function rankByPrice(bids: readonly Bid[]): BidScore[] {
  return [...bids]
    .sort((a, b) => Number(a.amount) - Number(b.amount) || a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1))
    .map((bid, i) => ({ bidId: bid.id, rank: i + 1, amount: Number(bid.amount), priceScore: null, qualityScore: null, total: null }));
}

const round = (value: number) => Math.round(value * 100) / 100;

/**
 * Rated criteria: price score = lowest / amount × priceWeight, quality score = quality × qualityWeight / 100,
 * total = both; highest total first, then the lower price, then the earlier bid.
 */
export function rankByRatedCriteria(bids: readonly Bid[], quality: ReadonlyMap<string, number>, priceWeight: number, qualityWeight: number): BidScore[] {
  const lowest = Math.min(...bids.map((bid) => Number(bid.amount)));
  return bids
    .map((bid) => {
      const priceScore = round((lowest / Number(bid.amount)) * priceWeight);
      const qualityScore = round(((quality.get(bid.id) ?? 0) * qualityWeight) / 100);
      return { bid, priceScore, qualityScore, total: round(priceScore + qualityScore) };
    })
    .sort((a, b) => b.total - a.total || Number(a.bid.amount) - Number(b.bid.amount) || a.bid.createdAt.getTime() - b.bid.createdAt.getTime())
    .map((row, i) => ({ bidId: row.bid.id, rank: i + 1, amount: Number(row.bid.amount), priceScore: row.priceScore, qualityScore: row.qualityScore, total: row.total }));
}
