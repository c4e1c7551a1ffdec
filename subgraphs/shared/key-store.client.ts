import { Agent, request } from 'undici';
import { DomainError, ERROR_CODES, type ErrorCode } from '../../core/errors.js';
import { KEY_STORE_PATH, signInternalRequest, type CreatedKey, type KeyFilter, type KeyStore, type KeyStoreOperation, type KeyView, type NewKey } from '../../core/key-store.js';

/** How long a key store call may take before the subgraph gives up on the edge. */
const TIMEOUT_MS = 10_000;

interface ErrorBody {
  error?: { code?: unknown; message?: unknown; extensions?: { param?: unknown; reason?: unknown } };
}

/**
 * The edge's key store over HTTP, for a subgraph in a process of its own: each call is a signed
 * `POST <edge>/internal/key-store/<operation>` on kept-alive connections. The edge's domain errors
 * are raised again as the same DomainError (code, message, param, reason), so clients see what
 * they would see in process; an edge that cannot be reached is SERVICE_UNAVAILABLE.
 */
export class KeyStoreClient implements KeyStore {
  private readonly agent = new Agent({ keepAliveTimeout: 30_000, connections: 16, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });

  constructor(
    /** The edge's internal address (EDGE_INTERNAL_URL), e.g. http://127.0.0.1:4000. */
    private readonly edgeUrl: string,
    private readonly internalSecret: string,
  ) {}

  listKeys(filter: KeyFilter = {}): Promise<KeyView[]> {
    return this.call('listKeys', filter);
  }

  createKey(input: NewKey): Promise<CreatedKey> {
    return this.call('createKey', input);
  }

  disableKey(id: string, account?: string): Promise<KeyView> {
    return this.call('disableKey', { id, account });
  }

  enableKey(id: string): Promise<KeyView> {
    return this.call('enableKey', { id });
  }

  expireKey(id: string, at: Date): Promise<KeyView> {
    return this.call('expireKey', { id, at });
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async call<T>(operation: KeyStoreOperation, input: object): Promise<T> {
    const url = new URL(`${KEY_STORE_PATH}/${operation}`, this.edgeUrl);
    const body = JSON.stringify(input);
    let status: number;
    let text: string;
    try {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signInternalRequest(this.internalSecret, 'POST', url.pathname, body) },
        body,
        dispatcher: this.agent,
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch {
      throw new DomainError('SERVICE_UNAVAILABLE', 'The key store (the platform edge) cannot be reached now; try again shortly');
    }
    if (status === 200) return (JSON.parse(text) as { result: T }).result;
    throw this.errorOf(operation, status, text);
  }

  /** The edge's refusal as the DomainError it was; anything else (a wrong INTERNAL_SECRET, a 500) is internal. */
  private errorOf(operation: KeyStoreOperation, status: number, text: string): DomainError {
    let body: ErrorBody = {};
    try {
      body = JSON.parse(text) as ErrorBody;
    } catch {
      // Not the endpoint's own body (a proxy's page?): internal, below.
    }
    const code = body.error?.code;
    const message = body.error?.message;
    const relayable = typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code) && code !== 'UNAUTHENTICATED' && code !== 'INTERNAL_SERVER_ERROR';
    if (relayable && typeof message === 'string' && (status < 500 || code === 'SERVICE_UNAVAILABLE')) {
      const { param, reason } = body.error?.extensions ?? {};
      return new DomainError(code as ErrorCode, String(message), {
        ...(typeof param === 'string' ? { param } : {}),
        ...(typeof reason === 'string' ? { reason } : {}),
      });
    }
    // Masked for the client (error-masking.ts) and logged with this message.
    return new DomainError('INTERNAL_SERVER_ERROR', `The edge's key store refused ${operation} with ${status}: ${text.slice(0, 200)}`);
  }
}
