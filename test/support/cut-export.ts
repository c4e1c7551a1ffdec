import http from 'node:http';
import pg from 'pg';

/** What an HTTP client saw of a response: `complete` is false when the body never got its last chunk. */
export interface ReadBody {
  status: number;
  body: string;
  complete: boolean;
}

/**
 * GETs an export `url` and cuts it after the response has started: the export waits on a lock
 * taken here, so its first bytes are out when its COPY's PostgreSQL backend is ended (`backend`)
 * or the client closes the connection on them (`client`). Resolves with what the client read
 * until the connection closed.
 */
export async function exportCutMidStream(
  databaseUrl: string,
  url: string,
  headers: Record<string, string> = {},
  cut: 'backend' | 'client' = 'backend',
): Promise<ReadBody> {
  const blocker = new pg.Client({ connectionString: databaseUrl });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table "traceroute"."trace" in access exclusive mode');
    const answer = new Promise<ReadBody>((resolve, reject) => {
      http.get(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
          if (cut === 'client') res.destroy();
        });
        // An aborted chunked body ends with 'aborted' then 'close' and never 'end'.
        res.on('close', () => resolve({ status: res.statusCode!, body, complete: res.complete }));
      }).on('error', reject);
    });
    if (cut === 'client') return await answer;
    let terminated = false;
    for (let i = 0; i < 100 && !terminated; i++) {
      // pg_stat_activity is read once per transaction and kept: the blocker's is open, so it asks afresh each time.
      await blocker.query('select pg_stat_clear_snapshot()');
      const rows = await blocker.query(
        `select pg_terminate_backend(pid) as done from pg_stat_activity where query like 'copy (select%' and wait_event_type = 'Lock'`,
      );
      terminated = rows.rows.some((r) => r.done);
      if (!terminated) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!terminated) throw new Error(`No export of ${url} was found waiting on the lock`);
    return await answer;
  } finally {
    await blocker.query('rollback');
    await blocker.end();
  }
}
