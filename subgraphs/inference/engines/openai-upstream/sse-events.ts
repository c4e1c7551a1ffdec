/** One server-sent event: its name (`message` unless the server named it) and its joined data lines. */
export interface SseEvent {
  event: string;
  data: string;
}

// llama.cpp's server has sent a failure as a bare `error: {...}` line, which the standard would
// drop: it comes out as an event named `error`.

/** Splits a text/event-stream body into events by the WHATWG rules (blank line ends one, `:` a comment). */
export async function* readSseEvents(body: AsyncIterable<Buffer | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let event = '';
  let data: string[] = [];
  const flush = (): SseEvent | undefined => {
    const out = data.length > 0 ? { event: event || 'message', data: data.join('\n') } : undefined;
    event = '';
    data = [];
    return out;
  };
  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
      const line = buffer.slice(0, newline);
      // A lone \r at the end of the buffer may be the first half of \r\n: wait for more.
      if (buffer[newline] === '\r' && newline === buffer.length - 1) break;
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        const done = flush();
        if (done) yield done;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      else if (field === 'error') {
        event = 'error';
        data.push(value);
      }
    }
  }
  buffer += decoder.decode();
  // A final event without its blank line still counts (the stream ended after it).
  if (buffer !== '' && buffer.startsWith('data:')) data.push(buffer.slice(5).replace(/^ /, ''));
  const last = flush();
  if (last) yield last;
}
