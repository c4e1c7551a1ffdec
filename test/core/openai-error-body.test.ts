import { describe, expect, it } from 'vitest';
import { openAIErrorFormat } from '../../edge/interfaces/inference/inference.error-body.js';
import { errorBody, WireError } from '../../subgraphs/inference/protocol/wire-error.js';

describe('the OpenAI error body', () => {
  it('is one format: the edge\'s refusals and the inference subgraph\'s answers agree for every status', () => {
    for (const status of [400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 502, 503]) {
      const edge = openAIErrorFormat({ status, code: 'some_code', message: 'A message', param: 'model' }, 'req_1');
      const subgraph = errorBody(new WireError(status, 'some_code', 'A message', 'model'));
      expect(edge, String(status)).toEqual(subgraph);
    }
  });

  it('types a wrong key as OpenAI does: 401 invalid_request_error', () => {
    expect(openAIErrorFormat({ status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided.' }, 'req_1')).toEqual({
      error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
  });
});
