// autocannon's setupRequest for bench/gateway-overhead.ts: each request looks up another member
// of the pool, so the edge's in-flight deduplication cannot serve many requests with one fetch.
// CommonJS, and loaded by path: autocannon's worker threads `require` it (they cannot take a function).
const { readFileSync } = require('node:fs');

const pool = JSON.parse(readFileSync(process.env.BENCH_MEMBER_POOL_FILE, 'utf8'));
const PLACEHOLDER = /__MEMBER_ID__/g;

module.exports = function setupRequest(request) {
  const id = pool[Math.floor(Math.random() * pool.length)];
  return {
    ...request,
    path: request.path.replace(PLACEHOLDER, id),
    ...(typeof request.body === 'string' ? { body: request.body.replace(PLACEHOLDER, id) } : {}),
  };
};
