import type { Logger } from 'pino';
import type { GenerationEvent, Usage } from '../engine/text-engine.js';
import type { GenerationService, GenerateCall } from '../generation/generation.service.js';
import type { UrlImagePolicy } from '../image-input/image-input-refused.js';
import { outcomeFor, WireError, wireErrorOf } from '../protocol/wire-error.js';
import { parseWire } from '../protocol/wire-body.js';
import type { WireCall, WireRoute } from '../protocol/wire-route.js';
import { badValueStatus, USAGE_INTERFACE, WIRE_INTERFACES, type WireInterface } from '../protocol/wire-interface.js';
import { ResponseDraft } from './response-object.js';
import { ResponseStream } from './response-stream.js';
import { responsesCallOf, responsesSchema } from './responses-request.js';

/**
 * OpenAI's Responses API on every OpenAI-compatible interface, an adapter over the same
 * generation as chat completions: the body becomes chat messages, sampling and guided output,
 * runs on the interface's providers (usage recorded as chat's), and the answer is a Response
 * object or its stream of events. Responses are not kept: GET of one is OpenAI's 404.
 */
export function responsesRoutes(service: GenerationService, logger: Logger, urlImages: Record<WireInterface, UrlImagePolicy>): WireRoute[] {
  const create = async (wire: WireCall) => {
    const { iface, res } = wire;
    const body = parseWire(iface, responsesSchema(iface === 'gateway'), wire.req.body);
    const { paramOf, ...asked } = responsesCallOf(body, badValueStatus(iface));
    // The generation names parameters as chat's messages; the client sent input items.
    const answerOf = (error: unknown) => {
      const answered = wireErrorOf(iface, error);
      const param = paramOf(answered.param);
      return param === answered.param ? answered : new WireError(answered.status, answered.code, answered.message, param, answered.retryAfter);
    };
    const stream = body.stream === true;
    const draft = new ResponseDraft(body);
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
    const failMidStream = (error: unknown) => {
      const answered = answerOf(error);
      if (answered.status >= 500) logger.warn({ err: error }, 'response failed midway');
      events.send('response.failed', { response: draft.response('failed', { error: answered, text: events.answered, usage }) });
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
      failMidStream(error);
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
        res.json(draft.response(status, { text, finishReason: event.finishReason, usage: event.usage }));
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
      events.end(event.finishReason, usage);
      res.end();
      run.finish({ status: 200, usage });
    } catch (error) {
      if (wire.signal.aborted) {
        run.finish({ status: 499, errorCode: 'client_closed', usage });
        (wire.req.log ?? logger).info({ path: wire.req.path }, 'the client closed the connection during the answer');
        return;
      }
      const answered = failMidStream(error);
      run.finish({ status: answered.status, errorCode: answered.code, usage });
    }
  };

  return [
    {
      method: 'POST',
      path: '/v1/responses',
      interfaces: WIRE_INTERFACES,
      summary: "OpenAI's Responses API over the same generation as chat (stream: true for its events); nothing is stored",
      handle: create,
    },
    // What OpenAI does with a stored response: none is kept, so each is 404 naming the response.
    ...(
      [
        ['GET', '/v1/responses/:id', 'A stored response'],
        ['DELETE', '/v1/responses/:id', 'Deletes a stored response'],
        ['GET', '/v1/responses/:id/input_items', 'The input items of a stored response'],
        ['POST', '/v1/responses/:id/cancel', 'Cancels a background response'],
      ] as const
    ).map(([method, path, what]): WireRoute => ({
      method,
      path,
      interfaces: WIRE_INTERFACES,
      summary: `${what}: responses are not stored, so always 404 response_not_found (send the conversation as input instead)`,
      handle: async ({ req }) => {
        throw notKept(String(req.params.id));
      },
    })),
  ];
}

function notKept(id: string): WireError {
  return new WireError(404, 'response_not_found', `Response with id '${id}' not found: responses are not stored here (store is ignored); keep the output and send it back as input`, 'response_id');
}
