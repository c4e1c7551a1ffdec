import type { Readable } from 'node:stream';
import Assembler from 'stream-json/assembler.js';
import parser from 'stream-json/parser.js';
import { ImageEngineError, type ImageGenerationStream } from '../../engine/image-engine.js';

type Token = parser.Token;

/** What the answer may hold besides its images (parameters, info): small, so it is assembled whole up to this size. */
const MAX_REST_CHARS = 4 * 1024 * 1024;

const malformed = (detail: string) => new ImageEngineError('upstream_error', `The image engine answered the generation in an unknown shape: ${detail}`);

/**
 * Reads a WebUI generation answer, `{images: [base64...], parameters: {...}, info: "<JSON>"}`, as
 * it arrives (stream-json's tokenizer): each image's base64 goes on in pieces as the upstream sends
 * it, never held whole; the other keys are assembled and given with `done`. The shape is checked
 * as it comes: anything else throws upstream_error where it appears.
 */
export async function* readGeneration(body: Readable): ImageGenerationStream {
  const tokens = parser.asStream({ packKeys: true, streamKeys: false, packStrings: false, streamStrings: true, packNumbers: true, streamNumbers: false });
  body.on('error', (error) => tokens.destroy(error));
  body.pipe(tokens);
  const rest: Record<string, unknown> = {};
  let restChars = 0;
  let depth = 0;
  let key: string | null = null;
  // images: 'before' its array, 'in' it, 'after' it.
  let images: 'none' | 'in' | 'after' = 'none';
  let inString = false;
  let pending = '';
  let assembler: Assembler | null = null;
  try {
    for await (const token of tokens as AsyncIterable<Token>) {
      if (depth === 0) {
        if (token.name !== 'startObject') throw malformed('not a JSON object');
        depth = 1;
        continue;
      }
      if (assembler) {
        // A value of another key, assembled whole; strings come in pieces and are packed here.
        if (token.name === 'startString') {
          inString = true;
          pending = '';
          continue;
        }
        if (token.name === 'stringChunk' && inString) {
          pending += token.value;
          restChars += token.value.length;
          if (restChars > MAX_REST_CHARS) throw malformed(`more than ${MAX_REST_CHARS} characters besides the images`);
          continue;
        }
        assembler.consume(inString && token.name === 'endString' ? { name: 'stringValue', value: pending } : token);
        inString = false;
        if (assembler.done) {
          rest[key!] = assembler.current;
          assembler = null;
        }
        continue;
      }
      if (images === 'in') {
        if (token.name === 'startString') yield { type: 'image' };
        else if (token.name === 'stringChunk') yield { type: 'chunk', text: token.value };
        else if (token.name === 'endArray') images = 'after';
        else if (token.name !== 'endString') throw malformed('an image that is not a string');
        continue;
      }
      if (token.name === 'keyValue') {
        key = token.value;
        continue;
      }
      if (token.name === 'endObject') {
        depth = 0;
        continue;
      }
      if (key === 'images') {
        if (token.name === 'startArray') images = 'in';
        else if (token.name === 'nullValue') images = 'after';
        else throw malformed('images is not a list');
        continue;
      }
      if (key === null) throw malformed('a value without a key');
      assembler = new Assembler();
      if (token.name === 'startString') {
        inString = true;
        pending = '';
        continue;
      }
      assembler.consume(token);
      if (assembler.done) {
        rest[key] = assembler.current;
        assembler = null;
      }
    }
  } catch (error) {
    if (error instanceof ImageEngineError) throw error;
    // stream-json's tokenizer refusing the text is the upstream's fault; anything else (the body
    // failing, an abort, the deadline) goes to the caller, which tells them apart.
    throw error instanceof Error && error.message.startsWith('Parser cannot parse input') ? malformed('not JSON') : error;
  } finally {
    body.destroy();
  }
  if (depth !== 0 || images === 'in') throw malformed('the answer ended early');
  if (images === 'none') throw malformed('no images');
  if (typeof rest.info !== 'string') throw malformed('info is not a string');
  // The task id is ours, not the caller's: it does not come back in the echoed parameters.
  const { force_task_id: _ours, ...parameters } = rest.parameters && typeof rest.parameters === 'object' && !Array.isArray(rest.parameters) ? (rest.parameters as Record<string, unknown>) : {};
  yield { type: 'done', parameters, info: rest.info };
}
