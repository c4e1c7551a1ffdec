import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((candidate) => existsSync(candidate));

/**
 * Why the proxy tests cannot run here, or undefined when they can. In CI (`CI` set) a missing nginx
 * is an error, not a skip: .ci/run installs Debian's nginx.
 */
export function nginxMissing(): string | undefined {
  if (NGINX) return undefined;
  if (process.env.CI) throw new Error("nginx is not installed: CI must install it (.ci/run installs Debian's nginx)");
  return 'nginx is not installed (apt-get install nginx); CI runs these tests';
}

export interface NginxProxy {
  /** The TLS port in front of each upstream, in the order given. */
  ports: number[];
  stop(): Promise<void>;
}

/**
 * nginx on loopback terminating TLS (a self-signed certificate made here with openssl) in front of
 * each of `upstreams` (http://127.0.0.1:<port>), as an operator's reverse proxy is set up: it
 * appends the peer to X-Forwarded-For, says the scheme in X-Forwarded-Proto and passes websocket
 * upgrades on. Resolves once
 * every port accepts connections.
 */
export async function startNginxProxy(upstreams: number[]): Promise<NginxProxy> {
  if (!NGINX) throw new Error(nginxMissing() ?? 'nginx is not installed');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'nginx-proxy-'));
  await promisify(execFile)('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
  ]);
  const ports = await Promise.all(upstreams.map(() => freePort()));
  const servers = upstreams.map(
    (upstream, i) => `
    server {
      listen 127.0.0.1:${ports[i]} ssl;
      ssl_certificate ${dir}/cert.pem;
      ssl_certificate_key ${dir}/key.pem;
      location / {
        proxy_pass http://127.0.0.1:${upstream};
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $http_connection;
      }
    }`,
  );
  await writeFile(
    path.join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${servers.join('\n')}
}
`,
  );
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await Promise.race([
      Promise.all(ports.map((port) => accepting(port))),
      exited.then(async (code) => {
        throw new Error(`nginx exited (${code}) before it listened:\n${await readFile(path.join(dir, 'error.log'), 'utf8').catch(() => '')}`);
      }),
    ]);
  } catch (error) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    ports,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGQUIT');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once `port` on loopback accepts a connection (tried again on each refusal). */
async function accepting(port: number): Promise<void> {
  for (;;) {
    const connected = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (connected) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
