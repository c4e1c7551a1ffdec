// A leaf module: subgraphs/shared/server.ts needs this too, and must not import the platform's
// configuration (which imports the key store, which imports subgraphs/shared).

/** How a client reaches a server bound to `host`: a wildcard bind is reached on loopback, IPv6 in brackets. */
export function connectableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
