import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Headers that carry credentials, in requests and responses: the edge's keys, cookies (the
 * dashboard's session is one, valid for days), CSRF tokens, and what signs calls between services.
 */
export const CREDENTIAL_HEADERS = [
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'x-csrf-token',
  'x-xsrf-token',
  'x-platform-principal',
  'x-platform-signature',
] as const;

/** Query parameters that carry credentials (`api_key` is the traceroute spec's; the rest are common spellings). */
export const CREDENTIAL_PARAMS = ['api_key', 'apikey', 'api-key', 'key', 'token', 'access_token', 'auth', 'password', 'secret', 'signature'] as const;

const REDACTED = '[redacted]';
const credentialParam = new Set<string>(CREDENTIAL_PARAMS);
const isCredentialParam = (name: string) => credentialParam.has(name.toLowerCase().replace(/\[.*$/, ''));

/** Decodes a query-string name as URLSearchParams would, without throwing on a stray `%`. */
function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * A URL (path and query) with the value of every credential parameter replaced. Works on the raw
 * text, so the rest of the URL is logged exactly as it came.
 */
export function redactUrl(url: string): string;
export function redactUrl(url: string | undefined): string | undefined;
export function redactUrl(url: string | undefined): string | undefined {
  if (!url) return url;
  const start = url.indexOf('?');
  if (start === -1) return url;
  const hash = url.indexOf('#', start);
  const end = hash === -1 ? url.length : hash;
  const query = url
    .slice(start + 1, end)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return isCredentialParam(decodedName(name)) && equals !== -1 ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, start)}?${query}${url.slice(end)}`;
}

/** The query string without its credential parameters, for relaying a request to another service. */
export function withoutCredentialParams(search: URLSearchParams): URLSearchParams {
  return new URLSearchParams([...search].filter(([name]) => !isCredentialParam(name)));
}

type SerializedRequest = { url?: string; headers?: Record<string, unknown>; query?: Record<string, unknown> } & Record<string, unknown>;
type SerializedResponse = { headers?: Record<string, unknown> } & Record<string, unknown>;

function redactHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!headers || typeof headers !== 'object') return headers;
  const copy = { ...headers };
  for (const name of CREDENTIAL_HEADERS) if (name in copy) copy[name] = REDACTED;
  return copy;
}

/**
 * The request serializer of every request log line (request-log.ts), the edge's and every subgraph's: URL, query and headers with their
 * credentials replaced. Copies, never touching the live request.
 */
export function redactRequest(req: SerializedRequest): SerializedRequest {
  const headers = redactHeaders(req.headers);
  const query =
    req.query && typeof req.query === 'object'
      ? Object.fromEntries(Object.entries(req.query).map(([name, value]) => [name, isCredentialParam(name) ? REDACTED : value]))
      : req.query;
  return { ...req, url: redactUrl(req.url), headers, query };
}

/** The response serializer of every request log line: its headers with credentials (`set-cookie`) replaced, in a copy. */
export function redactResponse(res: SerializedResponse): SerializedResponse {
  return { ...res, headers: redactHeaders(res.headers) };
}


/** One structured logger per process; services take children of it named after themselves. */
export function createLogger(level: string, name = 'platform', destination?: DestinationStream): Logger {
  return pino(
    {
      name,
      level,
      // A second net under request-log.ts's serializers, for a `req` or `res` logged by hand, and
      // for what an error may carry: body-parser's errors keep the body they could not parse (a
      // sign-in's password), a relayed request's error its headers.
      redact: {
        paths: [
          ...CREDENTIAL_HEADERS.flatMap((header) => [`req.headers["${header}"]`, `res.headers["${header}"]`, `err.headers["${header}"]`]),
          ...CREDENTIAL_PARAMS.map((param) => `req.query["${param}"]`),
          'req.body',
          'err.body',
        ],
        censor: REDACTED,
      },
    },
    destination,
  );
}
