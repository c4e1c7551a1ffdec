import type { Logger } from 'pino';
import type { GenerationEvent, Usage } from '../engine/text-engine.js';
import type { GenerationService, GenerateCall } from '../generation/generation.service.js';
import type { UrlImagePolicy } from '../image-input/image-input-refused.js';
import { outcomeFor, WireError, wireErrorOf } from '../protocol/wire-error.js';
import { parseWire } from '../protocol/wire-body.js';
import type { WireCall, WireRoute } from '../protocol/wire-route.js';
import { badValueStatus, USAGE_INTERFACE, WIRE_INTERFACES, type WireInterface } from '../protocol/wire-interface.js';
import { newId, ResponseDraft } from './response-object.js';
import { InputNotKept, ResponseStore, type KeptResponse, type StoredItem } from './response-store.js';
import { ResponseStream } from './response-stream.js';
import { responsesCallOf, responsesSchema, type ConversationItem, type ResponsesBody } from './responses-request.js';

/**
 * OpenAI's Responses API on every OpenAI-compatible interface, an adapter over the same
 * generation as chat completions: the body becomes chat messages, sampling and guided output,
 * runs on the interface's providers (usage recorded as chat's), and the answer is a Response
 * object or its stream of events. Responses are kept (unless `store: false`) in the caller's
 * scope for GET, DELETE, input_items, `previous_response_id` and `item_reference`, as OpenAI's are.
 */
export function responsesRoutes(service: GenerationService, logger: Logger, urlImages: Record<WireInterface, UrlImagePolicy>, store: ResponseStore): WireRoute[] {
  const create = async (wire: WireCall) => {
    const { iface, res } = wire;
    const body = parseWire(iface, responsesSchema(iface === 'gateway'), wire.req.body);
    const scope = ResponseStore.scopeOf(iface, wire.caller);
    const conversation = await conversationOf(store, scope, body);
    const { paramOf, ...asked } = responsesCallOf(body, badValueStatus(iface), conversation);
    const keeping = body.store !== false;
    // Kept before it is answered, so that the client's next call finds it; a store that fails is logged and the answer says store: false.
    const keep = async (response: ReturnType<ResponseDraft['response']>) => {
      if (!keeping) return;
      try {
        await store.keep(scope, { response: response as unknown as KeptResponse['response'], inputItems: conversation.input as StoredItem[] }, body.previous_response_id ?? null);
      } catch (error) {
        logger.error({ err: error, response: response.id }, 'a response could not be kept');
        response.store = false;
      }
    };
    // The generation names parameters as chat's messages; the client sent input items.
    const answerOf = (error: unknown) => {
      const answered = wireErrorOf(iface, error);
      const param = paramOf(answered.param);
      return param === answered.param ? answered : new WireError(answered.status, answered.code, answered.message, param, answered.retryAfter);
    };
    const stream = body.stream === true;
    const draft = new ResponseDraft(body, keeping);
    const events = new ResponseStream(draft, (chunk) => res.write(chunk), asked.tools !== undefined);
    // As chat's stream: headers and the opening events once a provider has the request.
    const open = () => {
      if (res.headersSent || wire.signal.aborted) return;
      res.status(200);
      res.setHeader('content-type', 'text/event-stream; charset=utf-8');
      res.setHeader('cache-control', 'no-cache');
      res.setHeader('x-accel-buffering', 'no');
      res.flushHeaders();
      events.open();
    };
    const call: GenerateCall = {
      interface: iface,
      usageInterface: USAGE_INTERFACE[iface],
      caller: wire.caller,
      ...(body.provider !== undefined ? { provider: body.provider } : {}),
      model: body.model,
      ...asked,
      streamed: stream,
      signal: wire.signal,
      urlImages: urlImages[iface],
      outcomeOf: outcomeFor(iface),
      ...(stream ? { onAccepted: open } : {}),
    };
    let usage: Usage | null = null;
    const failMidStream = async (error: unknown) => {
      const answered = answerOf(error);
      if (answered.status >= 500) logger.warn({ err: error }, 'response failed midway');
      const response = draft.response('failed', { error: answered, text: events.answered, usage });
      await keep(response);
      events.send('response.failed', { response });
      events.send('error', { code: answered.code, message: answered.message, param: answered.param });
      res.end();
      return answered;
    };
    let started: Awaited<ReturnType<GenerationService['start']>>;
    try {
      started = await service.start(call);
    } catch (error) {
      if (wire.signal.aborted) throw error;
      if (!res.headersSent) {
        const answered = answerOf(error);
        // A fault of ours goes to the router as it was thrown, to be logged with its stack.
        throw answered.status === 500 ? error : answered;
      }
      await failMidStream(error);
      return;
    }
    const { run, first } = started;
    const next = async (): Promise<GenerationEvent> => {
      const step = await run.events.next();
      if (step.done) throw new WireError(502, 'upstream_error', 'The engine ended the generation without finishing it');
      return step.value;
    };

    if (!stream) {
      try {
        let text = '';
        let event = first;
        while (event.type !== 'done') {
          if (event.type === 'delta') {
            // The message sits before or after the calls as its text came.
            if (event.text) draft.openMessage();
            text += event.text;
          } else {
            draft.callPiece(event.index, event);
          }
          event = await next();
        }
        run.finish({ status: 200, usage: event.usage });
        const status = event.finishReason === 'length' ? 'incomplete' : 'completed';
        const response = draft.response(status, { text, finishReason: event.finishReason, usage: event.usage });
        await keep(response);
        res.json(response);
        return;
      } catch (error) {
        const answered = answerOf(error);
        run.finish({ status: wire.signal.aborted ? 499 : answered.status, errorCode: wire.signal.aborted ? 'client_closed' : answered.code });
        throw answered;
      }
    }

    open();
    try {
      let event = first;
      while (event.type !== 'done') {
        events.piece(event);
        event = await next();
      }
      usage = event.usage;
      await events.end(event.finishReason, usage, keep);
      res.end();
      run.finish({ status: 200, usage });
    } catch (error) {
      if (wire.signal.aborted) {
        run.finish({ status: 499, errorCode: 'client_closed', usage });
        (wire.req.log ?? logger).info({ path: wire.req.path }, 'the client closed the connection during the answer');
        return;
      }
      const answered = await failMidStream(error);
      run.finish({ status: answered.status, errorCode: answered.code, usage });
    }
  };

  const keptOf = async ({ iface, req, caller }: WireCall, allowed: readonly string[] = []) => {
    refuseUnknownQuery(req.query, allowed);
    const id = String(req.params.id);
    const kept = await store.get(ResponseStore.scopeOf(iface, caller), id);
    if (!kept) throw notFound(id);
    return kept;
  };

  return [
    {
      method: 'POST',
      path: '/v1/responses',
      interfaces: WIRE_INTERFACES,
      summary: "OpenAI's Responses API over the same generation as chat (stream: true for its events); kept in the caller's scope (30 days by default) unless store: false",
      handle: create,
    },
    {
      method: 'GET',
      path: '/v1/responses/:id',
      interfaces: WIRE_INTERFACES,
      summary: "A kept response, as it was answered (a stream's last Response object); 404 response_not_found when it is not the caller's, expired or deleted",
      handle: async (wire) => {
        wire.res.json((await keptOf(wire)).response);
      },
    },
    {
      method: 'DELETE',
      path: '/v1/responses/:id',
      interfaces: WIRE_INTERFACES,
      summary: 'Deletes a kept response of the caller',
      handle: async ({ iface, req, res, caller }) => {
        refuseUnknownQuery(req.query);
        const id = String(req.params.id);
        if (!(await store.delete(ResponseStore.scopeOf(iface, caller), id))) throw notFound(id);
        res.json({ id, object: 'response', deleted: true });
      },
    },
    {
      method: 'GET',
      path: '/v1/responses/:id/input_items',
      interfaces: WIRE_INTERFACES,
      summary: "A kept response's input items, each with its id (OpenAI's list: limit 1-100, default 20; order asc or desc, default desc; after an item id)",
      handle: async (wire) => {
        const kept = await keptOf(wire, ['limit', 'order', 'after']);
        if (kept.inputItems === null) throw inputNotKept(kept.response.id, 404, 'response_id');
        wire.res.json(inputItemsPage(kept.inputItems, wire.req.query, badValueStatus(wire.iface)));
      },
    },
    {
      method: 'POST',
      path: '/v1/responses/:id/cancel',
      interfaces: WIRE_INTERFACES,
      summary: 'Cancels a background response: none are background here, so a kept one is 400 and any other 404 response_not_found',
      handle: async (wire) => {
        await keptOf(wire);
        throw new WireError(400, 'invalid_request', 'Only responses created with background: true can be cancelled, and none are background here: this one has ended', 'response_id');
      },
    },
  ];
}

// Its output is kept (item_reference finds it); its input was past responses.maxInputBytes.
function inputNotKept(id: string, status: 400 | 404, param: string): WireError {
  return new WireError(status, 'input_not_kept', `The input of response '${id}' was too large to keep (responses.maxInputBytes), so it cannot be listed or replayed: send the conversation as input instead`, param);
}

function refuseUnknownQuery(query: Record<string, unknown>, allowed: readonly string[] = []): void {
  for (const name of Object.keys(query)) if (!allowed.includes(name)) throw new WireError(400, 'unknown_parameter', `Unrecognized query parameter: ${name}`, name);
}

function notFound(id: string): WireError {
  return new WireError(404, 'response_not_found', `Response with id '${id}' not found`, 'response_id');
}

/**
 * The conversation a body continues: the previous response's, when it names one (its
 * `instructions` are not carried over, as OpenAI's are not), and its input with each
 * `item_reference` replaced by the kept item and an id given to each item that has none.
 */
async function conversationOf(store: ResponseStore, scope: string, body: ResponsesBody): Promise<{ history: ConversationItem[]; input: ConversationItem[] }> {
  let history: ConversationItem[] = [];
  if (body.previous_response_id != null) {
    const found = await store.conversation(scope, body.previous_response_id);
    if (!found) throw new WireError(400, 'previous_response_not_found', `Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_id');
    if (found instanceof InputNotKept) throw inputNotKept(found.responseId, 400, 'previous_response_id');
    history = found as unknown as ConversationItem[];
  }
  const references = body.input.flatMap((item) => (item.type === 'item_reference' ? [item.id] : []));
  const kept = await store.items(scope, references);
  const input = body.input.map((item, i): ConversationItem => {
    if (item.type !== 'item_reference') return withId(item);
    const found = kept.get(item.id);
    if (!found) throw new WireError(400, 'item_not_found', `Item with id '${item.id}' not found.`, `input[${i}]`);
    return found as unknown as ConversationItem;
  });
  return { history, input };
}

/** An input item as input_items lists it: with an id, and a message's text as a content part. */
function withId(item: ConversationItem): ConversationItem {
  if (item.type === 'function_call') return { ...item, id: item.id ?? newId('fc') };
  if (item.type === 'function_call_output') return { ...item, id: item.id ?? newId('fco') };
  const content = typeof item.content === 'string' ? [item.role === 'assistant' ? { type: 'output_text' as const, text: item.content, annotations: [] } : { type: 'input_text' as const, text: item.content }] : item.content;
  return { ...item, type: 'message', id: item.id ?? newId('msg'), content };
}

/** A page of OpenAI's input_items list. */
function inputItemsPage(items: StoredItem[], query: Record<string, unknown>, badValue: 400 | 422) {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (typeof query.limit !== 'undefined' && (typeof query.limit !== 'string' || !/^\d+$/.test(query.limit) || limit < 1 || limit > 100)) {
    throw new WireError(badValue, 'invalid_value', 'limit must be an integer from 1 to 100', 'limit');
  }
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new WireError(badValue, 'invalid_value', "order must be 'asc' or 'desc'", 'order');
  const ordered = order === 'asc' ? items : [...items].reverse();
  let start = 0;
  if (query.after !== undefined) {
    const at = typeof query.after === 'string' ? ordered.findIndex((item) => item.id === query.after) : -1;
    if (at < 0) throw new WireError(badValue, 'invalid_value', 'after must be the id of an input item of this response', 'after');
    start = at + 1;
  }
  const data = ordered.slice(start, start + limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < ordered.length };
}
