import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { openedWithProbes, receivedBeforeMarker, until } from '../../support/subscription-probe.js';

let platform: TestPlatform;
const clients: Client[] = [];

beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(async () => {
  for (const client of clients) await client.dispose();
  await platform?.close();
});

type Json = Record<string, any>;
let counter = 0;

function wsClient(key: string): Client {
  const client = createClient({ url: platform.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${key}` }, retryAttempts: 0 });
  clients.push(client);
  return client;
}

async function ok(key: string, method: string, path: string, json: unknown, status: number): Promise<Json> {
  const response = await platform.request(`/api/v1${path}`, { method, key, json });
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text);
}

interface Event {
  data?: { jobApplicationStatusChanged: { id: string; status: string; stage: string; coverLetter: string | null; rejectionReason: string | null; member: { id: string; name: string } | null; jobPosting: { title: string } } };
  errors?: { message: string; extensions?: Json }[];
}

const SUBSCRIPTION = `subscription($memberId: ID, $applicationId: ID) {
  jobApplicationStatusChanged(memberId: $memberId, applicationId: $applicationId) {
    id status stage coverLetter rejectionReason member { id name } jobPosting { title }
  }
}`;

describe('jobApplicationStatusChanged over graphql-ws through the gateway', () => {
  it("delivers a member's application changes in order, with federated fields, and nothing of other members or accounts", async () => {
    const account = `subs-${++counter}`;
    const key = await platform.issueKey(account, 'live');
    const poster = await ok(key, 'POST', '/members', { name: 'Poster', email: 'poster@example.org' }, 201);
    const ada = await ok(key, 'POST', '/members', { name: 'Ada', email: 'ada@example.org' }, 201);
    const bob = await ok(key, 'POST', '/members', { name: 'Bob', email: 'bob@example.org' }, 201);
    const job = await ok(key, 'POST', '/jobs', { title: 'Engineer', description: 'd', postedBy: poster.id }, 201);

    const received: Event[] = [];
    const iterator = wsClient(key).iterate<Event['data']>({ query: SUBSCRIPTION, variables: { memberId: ada.id } });
    void (async () => {
      for await (const result of iterator) received.push(result as Event);
    })();
    const label = (event: Event) => event.data?.jobApplicationStatusChanged.coverLetter;
    // Probes: Ada applies to fresh postings; each application is an event of hers.
    const probe = async (text: string) => {
      const posting = await ok(key, 'POST', '/jobs', { title: `Probe ${text}`, description: 'd', postedBy: poster.id }, 201);
      await ok(key, 'POST', `/jobs/${posting.id}/apply`, { memberId: ada.id, coverLetter: text }, 201);
    };
    const start = await openedWithProbes(received, probe, label);

    const application = await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: ada.id, coverLetter: 'main' }, 201);
    await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: bob.id, coverLetter: 'bob' }, 201);
    await ok(key, 'POST', `/job-applications/${application.id}/move`, { stage: 'INTERVIEW' }, 200);
    await ok(key, 'POST', `/job-applications/${application.id}/reject`, { reason: 'Another candidate' }, 200);
    // Another account applying with Ada's id to its own posting publishes on its own topic.
    const stranger = await platform.issueKey(`subs-stranger-${++counter}`, 'live');
    const strangerPoster = await ok(stranger, 'POST', '/members', { name: 'S', email: 's@example.org' }, 201);
    const strangerJob = await ok(stranger, 'POST', '/jobs', { title: 'Elsewhere', description: 'd', postedBy: strangerPoster.id }, 201);
    await ok(stranger, 'POST', `/jobs/${strangerJob.id}/apply`, { memberId: ada.id, coverLetter: 'stranger' }, 201);

    const events = await receivedBeforeMarker(received, probe, label, { from: start });
    expect(events.map((event) => event.errors)).toEqual([undefined, undefined, undefined]);
    expect(events.map((event) => event.data!.jobApplicationStatusChanged)).toEqual([
      { id: application.id, status: 'ACTIVE', stage: 'APPLIED', coverLetter: 'main', rejectionReason: null, member: { id: ada.id, name: 'Ada' }, jobPosting: { title: 'Engineer' } },
      { id: application.id, status: 'ACTIVE', stage: 'INTERVIEW', coverLetter: 'main', rejectionReason: null, member: { id: ada.id, name: 'Ada' }, jobPosting: { title: 'Engineer' } },
      { id: application.id, status: 'REJECTED', stage: 'INTERVIEW', coverLetter: 'main', rejectionReason: 'Another candidate', member: { id: ada.id, name: 'Ada' }, jobPosting: { title: 'Engineer' } },
    ]);
  });

  it('follows one application by applicationId, and refuses an unknown one or both filters', async () => {
    const key = await platform.issueKey(`subs-${++counter}`, 'live');
    const poster = await ok(key, 'POST', '/members', { name: 'Poster', email: 'poster@example.org' }, 201);
    const job = await ok(key, 'POST', '/jobs', { title: 'Engineer', description: 'd', postedBy: poster.id }, 201);
    const application = await ok(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Out Sider', email: 'out@example.org' }, 201);
    const received: Event[] = [];
    const iterator = wsClient(key).iterate<Event['data']>({ query: SUBSCRIPTION, variables: { applicationId: application.id } });
    void (async () => {
      for await (const result of iterator) received.push(result as Event);
    })();
    // Probes: moving the application back and forth between stages.
    const stages = ['SCREENING', 'APPLIED'];
    let moves = 0;
    for (;;) {
      await ok(key, 'POST', `/job-applications/${application.id}/move`, { stage: stages[moves++ % 2] }, 200);
      const arrived = await new Promise<boolean>((resolve) => {
        const end = Date.now() + 200 * moves;
        const check = () => (received.length > 0 ? resolve(true) : Date.now() > end ? resolve(false) : setTimeout(check, 10));
        check();
      });
      if (arrived || moves > 30) break;
    }
    expect(received.length).toBeGreaterThan(0);
    const before = received.length;
    await ok(key, 'POST', `/job-applications/${application.id}/hire`, {}, 200);
    await until(() => received.slice(before).some((event) => event.data?.jobApplicationStatusChanged.status === 'HIRED'), 'the hire event');
    expect(received.at(-1)!.data!.jobApplicationStatusChanged).toMatchObject({ id: application.id, status: 'HIRED', member: null });

    const refused = (variables: Json) =>
      new Promise<Json>((resolve) =>
        wsClient(key).subscribe({ query: SUBSCRIPTION, variables }, { next: (value) => resolve(value as Json), error: (error) => resolve({ errors: error }), complete: () => resolve({ complete: true }) }),
      );
    const unknown = await refused({ applicationId: '00000000-0000-4000-8000-000000000000' });
    expect(JSON.stringify(unknown)).toContain('job_application_not_found');
    const both = await refused({ applicationId: application.id, memberId: poster.id });
    expect(JSON.stringify(both)).toContain('invalid_parameter');
  });
});
