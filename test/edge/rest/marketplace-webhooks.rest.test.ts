import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../subgraphs/membership/webhook/webhook-signature.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { startReceiver } from '../../subgraphs/membership/webhook-receiver.js';
import { body, tenderKit } from './tenders-support.js';

let platform: TestPlatform;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const kit = tenderKit(() => platform);

beforeAll(async () => {
  platform = await startTestPlatform({ webhooks: { allowPrivateTargets: true, timeoutMs: 2000 } });
  receiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await platform?.close();
});

const TYPES = ['application.status_changed', 'tender.period_closed', 'tender.awarded'];

interface Delivered {
  type: string;
  data: Record<string, any>;
}

async function endpoint(key: string, path: string): Promise<string> {
  const created = await body<{ secret: string }>(await kit.api('/chat/webhooks', key, { method: 'POST', json: { url: receiver.url(path), eventTypes: TYPES } }), 201);
  return created.secret;
}

/** The deliveries received at `path`, once `done` holds of them (the delivery worker and the marketplace clock run every second). */
async function received(path: string, done: (events: Delivered[]) => boolean, timeoutMs = 20_000): Promise<Delivered[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = receiver.at(path).map((r) => JSON.parse(r.body) as Delivered);
    if (done(events) || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('marketplace webhook events', () => {
  it('reach the account’s endpoint signed: an application’s status changes, a tender’s period closing (without anyone reading it) and its award', async () => {
    const buyer = await kit.party();
    const secret = await endpoint(buyer.key, '/buyer');
    const vendor = await kit.vendor();
    await endpoint(vendor.key, '/vendor');
    const sandbox = await kit.party('test', buyer.account);
    await endpoint(sandbox.key, '/sandbox');

    const poster = await body<{ id: string }>(await kit.api('/members', buyer.key, { method: 'POST', json: { name: 'Poster', email: 'poster@example.org' } }), 201);
    const job = await body<{ id: string }>(await kit.api('/jobs', buyer.key, { method: 'POST', json: { title: 'Engineer', description: 'APIs', postedBy: poster.id } }), 201);
    const application = await body<{ id: string }>(await kit.api(`/jobs/${job.id}/apply`, buyer.key, { method: 'POST', json: { name: 'Out Side', email: 'out@example.org' } }), 201);
    await body(await kit.api(`/job-applications/${application.id}/move`, buyer.key, { method: 'POST', json: { stage: 'INTERVIEW' } }), 200);

    const tender = await kit.tender(buyer.key, { endInMs: 2000 });
    await kit.placed(vendor.key, tender.id, { amount: 800 });

    // The period closes on the marketplace clock: nobody reads the tender before it is told of.
    const closed = await received('/buyer', (events) => events.some((e) => e.type === 'tender.period_closed'));
    expect(closed.find((e) => e.type === 'tender.period_closed')?.data).toMatchObject({ tender: { id: tender.id, status: 'EVALUATION', validBidCount: 1 }, livemode: true });
    await body(await kit.api(`/tenders/${tender.id}/award`, buyer.key, { method: 'PUT', json: {} }), 200);

    const events = await received('/buyer', (all) => all.some((e) => e.type === 'tender.awarded'));
    // Deliveries are sent concurrently: their order of arrival is not the order of the events.
    expect(events.map((e) => e.type).sort()).toEqual(['application.status_changed', 'application.status_changed', 'tender.awarded', 'tender.period_closed']);
    const changes = events.filter((e) => e.type === 'application.status_changed').map((e) => e.data);
    expect(changes.find((d) => d.from === null)).toMatchObject({ application: { id: application.id, jobPostingId: job.id, status: 'ACTIVE', stage: 'APPLIED', candidateEmail: 'out@example.org' }, from: null });
    expect(changes.find((d) => d.from !== null)).toMatchObject({ application: { id: application.id, stage: 'INTERVIEW' }, from: { status: 'ACTIVE', stage: 'APPLIED' } });
    expect(events.find((e) => e.type === 'tender.awarded')!.data).toMatchObject({ tender: { id: tender.id, status: 'AWARDED' }, award: { vendorId: vendor.vendorId, status: 'ACTIVE', value: { amount: 800, currency: 'EUR' } } });
    for (const r of receiver.at('/buyer')) {
      expect(() => verifyWebhook(secret, { id: String(r.headers['webhook-id']), timestamp: String(r.headers['webhook-timestamp']), signature: String(r.headers['webhook-signature']) }, r.body)).not.toThrow();
      expect(String(r.headers['webhook-id'])).toMatch(/^mkt_[0-9a-f]{32}$/);
    }
    // Each event once, under one id, however the relay went.
    expect(new Set(receiver.at('/buyer').map((r) => r.headers['webhook-id'])).size).toBe(4);
    // Another account (the vendor who bid) and the buyer's test mode hear nothing of it.
    expect(receiver.at('/vendor')).toEqual([]);
    expect(receiver.at('/sandbox')).toEqual([]);
  });
});
