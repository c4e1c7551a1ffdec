import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openaiClient, startInferencePlatform, type InferencePlatform } from './inference-test-kit.js';

/**
 * Plans on a running platform: keys issued on a plan (or on the configuration's default one) see
 * and use the plan's models only. Service T refuses a model outside the plan with 403
 * model_not_on_plan; Service I, whose table has no 403, answers 404 as for a model the key cannot
 * see. /v1/models?available_on_current_plan=1 lists the plan's models, =0 all of them with the flag.
 */
let running: InferencePlatform;
let baseUrl: string;
let freeKey: { id: string; secret: string };
let defaultKey: { id: string; secret: string };
let proKey: { id: string; secret: string };

const PLANS = {
  plans: [
    { id: 'free', name: 'Free', models: { provider_a: ['ocr-eng'], provider_d: ['ti?y'] } },
    { id: 'pro', name: 'Pro', models: { provider_a: ['*'], provider_b: ['*'], provider_c: ['*'], provider_d: ['*'] } },
  ],
  defaultPlan: 'free',
};

beforeAll(async () => {
  running = await startInferencePlatform(PLANS);
  baseUrl = running.platform.baseUrl;
  const identity = running.platform.identity();
  const knownPlans = ['free', 'pro'];
  freeKey = await identity.createKey({ account: 'plan-free', kind: 'text', plan: 'free', knownPlans });
  defaultKey = await identity.createKey({ account: 'plan-default', kind: 'text' });
  proKey = await identity.createKey({ account: 'plan-pro', kind: 'text', plan: 'pro', knownPlans });
}, 120_000);

afterAll(async () => {
  await running?.close();
});

const serviceT = (key: { secret: string }) => openaiClient(baseUrl, '/inference/text', key.secret);
const serviceI = (key: { secret: string }) => openaiClient(baseUrl, '/inference/image', key.secret);
const HELLO = { model: 'tiny', messages: [{ role: 'user' as const, content: 'hello' }], max_tokens: 2 };

interface ListedModel {
  id: string;
  available_on_current_plan?: boolean;
}

async function models(mount: string, key: { secret: string }, query: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}${mount}/v1/models${query}`, { headers: { authorization: `Bearer ${key.secret}` } });
  return { status: response.status, body: await response.json() };
}

function flags(list: ListedModel[]): Record<string, boolean | undefined> {
  return Object.fromEntries(list.map((m) => [m.id, m.available_on_current_plan]));
}

async function rejection(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe('Service T', () => {
  it('refuses a model outside the plan with 403 model_not_on_plan, for every endpoint', async () => {
    for (const key of [freeKey, defaultKey]) {
      const error = await rejection(serviceT(key).chat.completions.create(HELLO));
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(error.code).toBe('model_not_on_plan');
      expect(error.param).toBe('model');
      expect(await rejection(serviceT(key).chat.completions.create({ ...HELLO, stream: true }))).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(await rejection(serviceT(key).completions.create({ model: 'tiny', prompt: 'x', max_tokens: 1 }))).toBeInstanceOf(OpenAI.PermissionDeniedError);
      const tokenize = await fetch(`${baseUrl}/inference/text/v1/tokenize`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tiny', prompt: 'x' }),
      });
      expect(tokenize.status).toBe(403);
      expect((await tokenize.json()).error.code).toBe('model_not_on_plan');
    }
  });

  it('serves the model on a plan that has it', async () => {
    const answer = await serviceT(proKey).chat.completions.create(HELLO);
    expect(answer.usage!.completion_tokens).toBeGreaterThan(0);
  });

  it('keeps 404 for a model nobody serves, plan or not', async () => {
    const error = await rejection(serviceT(freeKey).chat.completions.create({ ...HELLO, model: 'nowhere' }));
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.code).toBe('model_not_found');
  });

  it('lists the plan models with available_on_current_plan=1, every model with the flag at 0', async () => {
    const onPlan = await models('/inference/text', freeKey, '?available_on_current_plan=1');
    expect(onPlan.status).toBe(200);
    expect(flags(onPlan.body.data)).toEqual({ 'ocr-eng': true });

    const all = await models('/inference/text', freeKey, '?available_on_current_plan=0');
    expect(all.status).toBe(200);
    expect(flags(all.body.data)).toEqual({ tiny: false, 'pipeline-check': false, 'ocr-eng': true });
    // Without the parameter: every model, flagged.
    expect(flags((await models('/inference/text', defaultKey, '')).body.data)).toEqual(flags(all.body.data));

    const pro = await models('/inference/text', proKey, '?available_on_current_plan=1');
    expect(flags(pro.body.data)).toEqual({ tiny: true, 'pipeline-check': true, 'ocr-eng': true });
  });

  it('answers available_on_current_plan=2 with 422', async () => {
    for (const value of ['2', 'yes']) {
      const { status, body } = await models('/inference/text', freeKey, `?available_on_current_plan=${value}`);
      expect(status).toBe(422);
      expect(body.error).toMatchObject({ code: 'invalid_value', param: 'available_on_current_plan' });
    }
  });
});

describe('Service I', () => {
  it('lists its provider models by plan', async () => {
    const onPlan = await models('/inference/image', freeKey, '?available_on_current_plan=1');
    expect(onPlan.status).toBe(200);
    expect(flags(onPlan.body.data)).toEqual({ tiny: true });
    const all = await models('/inference/image', freeKey, '?available_on_current_plan=0');
    expect(flags(all.body.data)).toEqual({ tiny: true, 'pipeline-check': false, 'ocr-eng': false });
  });

  it('serves the plan model and answers one outside it with 404 model_not_found (its table has no 403)', async () => {
    expect((await serviceI(freeKey).chat.completions.create(HELLO)).object).toBe('chat.completion');
    const error = await rejection(serviceI(freeKey).chat.completions.create({ ...HELLO, model: 'pipeline-check' }));
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.code).toBe('model_not_found');
    expect((await serviceI(proKey).chat.completions.create({ ...HELLO, model: 'pipeline-check' })).object).toBe('chat.completion');
  });

  it('answers available_on_current_plan=2 with 400', async () => {
    const { status, body } = await models('/inference/image', freeKey, '?available_on_current_plan=2');
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_value', param: 'available_on_current_plan' });
    const viaClient = await rejection(serviceI(freeKey).models.list({ query: { available_on_current_plan: 2 } }));
    expect(viaClient).toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe('a change of plan', () => {
  it('applies from the next request, and back to the default plan', async () => {
    const key = await running.platform.identity().createKey({ account: 'plan-moves', kind: 'text', plan: 'free', knownPlans: ['free', 'pro'] });
    await expect(serviceT(key).chat.completions.create(HELLO)).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    await running.platform.identity().setKeyPlan(key.id, 'pro', { knownPlans: ['free', 'pro'] });
    expect((await serviceT(key).chat.completions.create(HELLO)).object).toBe('chat.completion');
    expect(flags((await models('/inference/text', key, '?available_on_current_plan=1')).body.data)).toEqual({ tiny: true, 'pipeline-check': true, 'ocr-eng': true });
    await running.platform.identity().setKeyPlan(key.id, null);
    await expect(serviceT(key).chat.completions.create(HELLO)).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});

describe('keyless interfaces', () => {
  it('know no plan: the gateway serves every model and takes no available_on_current_plan', async () => {
    const gateway = openaiClient(baseUrl, '/inference/gateway');
    expect((await gateway.chat.completions.create({ ...HELLO, model: 'pipeline-check' })).object).toBe('chat.completion');
    const listed = (await gateway.models.list()).data as unknown as ListedModel[];
    for (const model of listed) expect(model.available_on_current_plan).toBeUndefined();
    const error = await rejection(gateway.models.list({ query: { available_on_current_plan: 1 } }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe('unknown_parameter');
  });
});
