import { once } from 'node:events';
import type { ImageGenerationStream } from '../engine/image-engine.js';
import type { WireCall } from '../protocol/wire-route.js';

/**
 * How a generation's answer is written: the WebUI's `{images, parameters, info}` or OpenAI's
 * `{created, data: [{b64_json}]}`; each says what opens and closes an image and what ends the answer.
 */
export interface ImageAnswerShape {
  open(index: number): string;
  close(index: number): string;
  end(images: number, parameters: Record<string, unknown>, info: string): string;
}

export const webuiShape: ImageAnswerShape = {
  open: (index) => `${index === 0 ? '{"images":[' : ','}"`,
  close: () => '"',
  end: (images, parameters, info) => `${images === 0 ? '{"images":[' : ''}],"parameters":${JSON.stringify(parameters)},"info":${JSON.stringify(info)}}`,
};

export function openAiShape(created: number, revisedPrompt?: string): ImageAnswerShape {
  const revised = revisedPrompt === undefined ? '' : `,"revised_prompt":${JSON.stringify(revisedPrompt)}`;
  return {
    open: (index) => `${index === 0 ? `{"created":${created},"data":[` : ','}{"b64_json":"`,
    close: () => `"${revised}}`,
    end: (images) => `${images === 0 ? `{"created":${created},"data":[` : ''}]}`,
  };
}

/** An answer up to this size is held whole before the 200 goes out, so that its failure is still a proper error answer. */
export const HELD_ANSWER_CHARS = 1024 * 1024;

const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/**
 * Writes a generation as its events arrive: base64 pieces go to the client as they come from the
 * upstream, under the socket's backpressure, so no image is held whole. The first megabyte is held:
 * a small answer (or one failing early) is answered whole, with its proper status on failure; past
 * it, the 200 is out, and a failure cuts the connection, which a JSON client sees as a broken answer.
 */
export async function answerGeneration(wire: WireCall, events: ImageGenerationStream, shape: ImageAnswerShape): Promise<void> {
  const { res } = wire;
  let held: string[] | null = [];
  let heldChars = 0;
  let images = 0;
  let open = false;
  const write = async (piece: string) => {
    if (held) {
      held.push(piece);
      heldChars += piece.length;
      if (heldChars <= HELD_ANSWER_CHARS) return;
      res.status(200).type('application/json');
      const out = held.join('');
      held = null;
      piece = out;
    }
    if (!res.write(piece)) await once(res, 'drain', { signal: wire.signal });
  };
  try {
    for await (const event of events) {
      if (event.type === 'image') {
        if (open) await write(shape.close(images - 1));
        await write(shape.open(images++));
        open = true;
      } else if (event.type === 'chunk') {
        await write(NEEDS_ESCAPE.test(event.text) ? JSON.stringify(event.text).slice(1, -1) : event.text);
      } else {
        await write(`${open ? shape.close(images - 1) : ''}${shape.end(images, event.parameters, event.info)}`);
        open = false;
      }
    }
  } catch (error) {
    if (held) throw error;
    // Headers and part of the body are gone: only the connection can still say it failed.
    res.destroy(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  if (held) {
    res.status(200).type('application/json').end(held.join(''));
    return;
  }
  res.end();
}
