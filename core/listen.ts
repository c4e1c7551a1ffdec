import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningService {
  name: string;
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Connections the kernel may hold for the process to accept (capped by net.core.somaxconn).
 * Node's default, 511, overflowed when thousands of websocket clients (re)connected while the
 * process was busy delivering events: the kernel dropped the handshakes (ListenOverflows) and
 * the clients saw ECONNRESET. A longer queue makes them wait for their turn instead.
 */
export const LISTEN_BACKLOG = 4096;

/** Listens on `host:port` and resolves once bound; a busy port rejects with a clear message. */
export function listen(server: http.Server, port: number, host: string, name: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`${name} cannot listen on ${host}:${port}: the port is already in use (is the platform already running?)`)
          : error,
      );
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ port, host, backlog: LISTEN_BACKLOG });
  });
}
