import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
}

/**
 * A webhook receiver on 127.0.0.1 that records every request and answers with the statuses
 * given by `answer` (by path), or never answers when it returns 'hang'.
 */
export async function startReceiver(answer: (path: string, count: number) => number | 'hang' = () => 200) {
  const received: ReceivedDelivery[] = [];
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const count = (counts.get(path) ?? 0) + 1;
      counts.set(path, count);
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path });
      const status = answer(path, count);
      if (status === 'hang') return;
      res.statusCode = status;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
