import { expect } from 'vitest';
import type { TestPlatform } from '../../support/platform-harness.js';

export interface Party {
  key: string;
  account: string;
  vendorId?: string;
}

export interface TenderBody {
  id: string;
  status: string;
  bidCount: number | null;
  termsVersion: number;
  value: { amount: number; currency: string };
  lots: { id: string; title: string; value: { amount: number; currency: string } }[];
  tenderPeriod: { startDate: string; endDate: string };
  awards: AwardBody[];
  isBuyer: boolean;
  invitedVendorIds: string[] | null;
  [key: string]: unknown;
}

export interface AwardBody {
  id: string;
  bidId: string;
  vendorId: string;
  lotId: string | null;
  status: string;
  value: { amount: number; currency: string };
  scores: { bidId: string; rank: number; amount: number; priceScore: number | null; qualityScore: number | null; total: number | null }[];
  cancellationReason: string | null;
}

export interface ReceiptBody {
  id: string;
  bidId: string;
  version: number;
  canonical: string;
  sha256: string;
  recordedAt: string;
}

export interface BidBody {
  id: string;
  tenderId: string;
  vendorId: string;
  lotId: string | null;
  status: string;
  version: number;
  value: { amount: number; currency: string };
  receipts?: ReceiptBody[];
  livemode?: boolean;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function body<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

export async function expectError(response: Response, status: number, code: string) {
  const parsed = await body<{ error: Record<string, unknown> }>(response, status);
  expect(parsed.error).toMatchObject({ code });
  return parsed.error;
}

/** The helpers of a tenders test file over one running platform. */
export function tenderKit(platform: () => TestPlatform) {
  let counter = 0;
  let adminKey: string | undefined;
  const api = (path: string, key: string, init: { method?: string; json?: unknown } = {}) => platform().request(`/api/v1${path}`, { ...init, key });

  async function graphql<T>(key: string, query: string, variables?: Record<string, unknown>) {
    const response = await platform().request('/graphql', { method: 'POST', key, json: { query, variables } });
    return body<{ data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] }>(response, 200);
  }

  async function admin(): Promise<string> {
    adminKey ??= await platform().issueKey('platform-ops', 'admin');
    return adminKey;
  }

  async function qualify(vendorId: string, status: 'APPROVED' | 'SUSPENDED') {
    const result = await graphql<{ qualifyVendor: { status: string } }>(await admin(), 'mutation($id: ID!, $s: VendorStatus!) { qualifyVendor(id: $id, status: $s) { status } }', { id: vendorId, s: status });
    expect(result.errors).toBeUndefined();
    return result.data!.qualifyVendor;
  }

  async function party(kind: 'live' | 'test' = 'live', account = `tenders-${process.pid}-${++counter}`): Promise<Party> {
    return { key: await platform().issueKey(account, kind), account };
  }

  /** A registered vendor; approved unless told otherwise. */
  async function vendor(options: { approve?: boolean; kind?: 'live' | 'test'; account?: string } = {}): Promise<Party> {
    const p = await party(options.kind ?? 'live', options.account);
    const registered = await body<{ id: string; status: string }>(
      await api('/vendors', p.key, { method: 'POST', json: { name: `Vendor ${p.account}`, country: 'DE', registrationNumber: `HRB-${counter}`, contactEmail: `sales@${p.account}.example`, categories: ['construction'] } }),
      201,
    );
    p.vendorId = registered.id;
    if (options.approve !== false) await qualify(registered.id, 'APPROVED');
    return p;
  }

  async function tender(key: string, options: { endInMs?: number; publish?: boolean; json?: Record<string, unknown> } = {}): Promise<TenderBody> {
    return body<TenderBody>(
      await api('/tenders', key, {
        method: 'POST',
        json: {
          title: 'Road resurfacing',
          description: 'Resurface 3 km of road.',
          value: { amount: 1000, currency: 'EUR' },
          tenderPeriod: { endDate: new Date(Date.now() + (options.endInMs ?? 60_000)).toISOString() },
          publish: options.publish ?? true,
          ...options.json,
        },
      }),
      201,
    );
  }

  async function bid(key: string, tenderId: string, json: Record<string, unknown>) {
    return api(`/tenders/${tenderId}/bid`, key, { method: 'POST', json: { currency: 'EUR', ...json } });
  }

  async function placed(key: string, tenderId: string, json: Record<string, unknown>): Promise<{ bid: BidBody; receipt: ReceiptBody }> {
    return body(await bid(key, tenderId, json), 201);
  }

  /** Waits until the tender's deadline has passed (plus a margin for the clocks). */
  async function pastDeadline(t: TenderBody): Promise<void> {
    const wait = new Date(t.tenderPeriod.endDate).getTime() - Date.now() + 50;
    if (wait > 0) await sleep(wait);
  }

  return { api, graphql, admin, qualify, party, vendor, tender, bid, placed, pastDeadline };
}
