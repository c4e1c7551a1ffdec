import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig, SUBGRAPH_NAMES } from '../../platform/config.js';
import { loadTopologyConfig } from '../../platform/supervisor/supervisor-config.js';
import { PROJECT_ROOT } from '../support/service-process.js';

// The image, the compose file and the chart are checked against the code: every entry, setting,
// port and health path they name must be one the platform has. No container engine or helm needed.

const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), 'utf8');

/** The entries the image runs by name: platform/entries/<name>.ts. */
const ENTRIES = readdirSync(path.join(PROJECT_ROOT, 'platform/entries'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -3));

/** Every environment variable the platform reads, taken from the files that read them. */
const SETTINGS = (() => {
  const names = new Set<string>();
  for (const file of ['platform/config.ts', 'platform/supervisor/supervisor-config.ts', 'subgraphs/inference/config/load-inference-config.ts']) {
    const source = read(file);
    for (const match of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)) names.add(match[1]);
    for (const match of source.matchAll(/FromEnv\(env, '([A-Z][A-Z0-9_]*)'/g)) names.add(match[1]);
  }
  // subgraphUrlFromEnv reads `${NAME}_URL` for each subgraph.
  for (const name of SUBGRAPH_NAMES) names.add(`${name.toUpperCase()}_URL`);
  return names;
})();

/** The paths both the edge and every subgraph answer GET on for probes. */
const HEALTH_PATHS = (() => {
  const paths = (file: string) => new Set([...read(file).matchAll(/\.get\('(\/[a-z]+)'/g)].map((match) => match[1]));
  const edge = paths('edge/interfaces/health/health.interface.ts');
  return new Set([...paths('subgraphs/shared/server.ts')].filter((p) => edge.has(p)));
})();

const DEFAULTS = loadConfig({ DATA_DIR: '/tmp/unused', INTERNAL_SECRET: 'x'.repeat(32) });
/** Each entry's port by default, as the code has it. */
const ENTRY_PORTS: Record<string, number> = { gateway: DEFAULTS.port, ...DEFAULTS.subgraphPorts };

describe('what the deployment definitions are checked against', () => {
  it('finds the entries, settings and health paths in the code', () => {
    expect(ENTRIES).toEqual(expect.arrayContaining(['gateway', 'migrate', ...SUBGRAPH_NAMES]));
    for (const name of ['DATABASE_URL', 'INTERNAL_SECRET', 'REDIS_URL', 'EDGE_WORKERS', 'INFERENCE_CONFIG', 'TRUST_PROXY', 'MEMBERSHIP_PORT']) {
      expect(SETTINGS.has(name), name).toBe(true);
    }
    expect([...HEALTH_PATHS].sort()).toEqual(['/health', '/livez', '/readyz']);
  });
});

describe('the image definition (Dockerfile)', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const runtime = stages.at(-1)!;

  it('builds on Node 24 in every stage and runs as a user that is not root', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage).toMatch(/^node:24[-.\w]*\s+AS\s+\w+/);
    expect(runtime).toMatch(/^USER node$/m);
    // No compilers or package installs in what runs.
    expect(runtime).not.toMatch(/apt-get|build-essential|gcc|python3/);
  });

  it('builds with the scripts package.json has, and installs production dependencies only for the runtime', () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    for (const match of dockerfile.matchAll(/npm run ([\w:-]+)/g)) expect(scripts[match[1]], match[1]).toBeDefined();
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(runtime).toMatch(/COPY --from=\w+ \/app\/dist \.\/dist/);
    expect(runtime).toMatch(/COPY --from=\w+ \/app\/dashboard\/dist \.\/dashboard\/dist/);
    // The entries it runs are compiled into dist/platform/entries.
    expect(read('tsconfig.build.json')).toMatch(/"include":\s*\[[^\]]*"platform"/);
  });

  it('names only settings, ports and entries the platform has', () => {
    for (const match of runtime.matchAll(/^\s*(?:ENV\s+)?([A-Z][A-Z0-9_]*)=/gm)) expect(SETTINGS.has(match[1]), match[1]).toBe(true);
    const exposed = runtime.match(/^EXPOSE (.+)$/m)![1].split(/\s+/).map(Number).sort();
    expect(exposed).toEqual(Object.values(ENTRY_PORTS).sort());
    const cmd = JSON.parse(runtime.match(/^CMD (.+)$/m)![1]) as string[];
    expect(ENTRIES).toContain(cmd[0]);
    const entrypoint = JSON.parse(runtime.match(/^ENTRYPOINT (.+)$/m)![1]) as string[];
    const script = entrypoint.at(-1)!;
    expect(runtime).toContain(`COPY ${script} ./${script}`);
    expect(existsSync(path.join(PROJECT_ROOT, script))).toBe(true);
    expect(read(script)).toContain('../dist/platform/entries');
  });

  it('keeps local builds, data and the repository out of the build context', () => {
    const ignored = read('.dockerignore').split('\n').map((line) => line.trim());
    for (const entry of ['node_modules', 'dist', '.data', '.git', 'dashboard/dist']) expect(ignored, entry).toContain(entry);
    // What the build copies before `npm ci` must not be ignored.
    for (const match of dockerfile.matchAll(/^COPY (?!--from)(.+) \.\/?\S*$/gm)) {
      for (const source of match[1].split(/\s+/)) expect(ignored, source).not.toContain(source);
    }
  });
});

/** Compose's `${NAME:-default}` and `${NAME:?message}` as an operator who sets only the required ones gets them. */
function interpolate(value: string): string {
  return value.replace(/\$\{([A-Z_]+)(?::-([^}]*)|:\?[^}]*)?\}/g, (_all, name: string, fallback?: string) =>
    fallback ?? (name === 'INTERNAL_SECRET' ? 'a-secret-of-thirty-two-characters-at-least' : `set-${name.toLowerCase()}`),
  );
}

describe('the compose file (deploy/compose.yaml)', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as {
    services: Record<string, { command?: string[]; environment?: Record<string, string>; healthcheck?: { test: string[] }; depends_on?: Record<string, { condition: string }>; deploy?: { replicas?: number }; ports?: string[]; volumes?: string[] }>;
  };
  const services = compose.services;
  const platform = Object.entries(services).filter(([, service]) => service.command);

  it('runs every entry, each by its name, and the migration before the services', () => {
    expect(platform.map(([, service]) => service.command![0]).sort()).toEqual([...ENTRIES].sort());
    for (const [name, service] of platform) {
      if (service.command![0] === 'migrate') continue;
      expect(service.depends_on?.migrate?.condition, name).toBe('service_completed_successfully');
    }
    const edge = platform.find(([, service]) => service.command![0] === 'gateway')![1];
    expect(edge.deploy?.replicas).toBeGreaterThanOrEqual(2);
    for (const subgraph of SUBGRAPH_NAMES) expect(edge.depends_on?.[subgraph]?.condition).toBe('service_healthy');
  });

  it('has a health check on every service, on a path and port the service answers', () => {
    for (const [name, service] of Object.entries(services)) {
      // migrate is a one-shot: what depends on it waits for its exit, not its health.
      if (service.command?.[0] === 'migrate') continue;
      expect(service.healthcheck?.test, name).toBeDefined();
      const url = service.healthcheck!.test.join(' ').match(/http:\/\/127\.0\.0\.1(?::(\d+))?(\/[a-z]+)/);
      if (!service.command) {
        if (url) expect(HEALTH_PATHS.has(url[2]), `${name} ${url[2]}`).toBe(true);
        continue;
      }
      expect(url, name).not.toBeNull();
      expect(HEALTH_PATHS.has(url![2]), `${name} ${url![2]}`).toBe(true);
      expect(Number(url![1]), name).toBe(ENTRY_PORTS[service.command[0]]);
    }
    expect(platform.find(([, service]) => service.command![0] === 'migrate')![1].healthcheck).toBeUndefined();
  });

  it('gives the services only settings the platform reads, with values it accepts, secrets from the environment', () => {
    for (const [name, service] of platform) {
      const env = Object.fromEntries(Object.entries(service.environment ?? {}).map(([key, value]) => [key, interpolate(String(value))]));
      for (const key of Object.keys(env)) expect(SETTINGS.has(key), `${name}: ${key}`).toBe(true);
      expect(() => loadConfig(env), name).not.toThrow();
      expect(() => loadTopologyConfig(env), name).not.toThrow();
      const config = loadConfig(env);
      for (const subgraph of SUBGRAPH_NAMES) {
        expect(new URL(config.subgraphUrls[subgraph]).hostname, `${name} → ${subgraph}`).toBe(subgraph);
        expect(Number(new URL(config.subgraphUrls[subgraph]).port)).toBe(ENTRY_PORTS[subgraph]);
      }
      expect(new URL(config.edgeInternalUrl).port).toBe(String(ENTRY_PORTS.gateway));
      // Secrets are never written in the file.
      expect(String(service.environment!.INTERNAL_SECRET)).toMatch(/^\$\{INTERNAL_SECRET:\?/);
      expect(String(service.environment!.DATABASE_URL)).toContain('${POSTGRES_PASSWORD:?');
    }
  });

  it('puts one public port in front of the edge replicas, proxying to the port the edge listens on', () => {
    const exposed = Object.entries(services).filter(([, service]) => service.ports?.length);
    expect(exposed.map(([name]) => name)).toEqual(['proxy']);
    const nginx = read('deploy/nginx.conf');
    const upstream = nginx.match(/server edge:(\d+)/);
    expect(Number(upstream?.[1])).toBe(ENTRY_PORTS.gateway);
    expect(services.edge.command).toEqual(['gateway']);
    expect(nginx).toMatch(/proxy_set_header Upgrade \$http_upgrade/);
    expect(nginx).toMatch(/X-Forwarded-For \$proxy_add_x_forwarded_for/);
  });
});

describe('the Helm chart (deploy/helm/federated-platform)', () => {
  const chartDir = path.join(PROJECT_ROOT, 'deploy/helm/federated-platform');
  const chart = parse(readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8')) as { name: string };
  const values = parse(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8')) as {
    edge: { port: number; workers: number; trustProxy: string };
    subgraphs: Record<string, { port: number; replicas: number; resources: unknown }>;
    probes: { livenessPath: string; readinessPath: string };
  };
  const templates = Object.fromEntries(
    readdirSync(path.join(chartDir, 'templates')).map((file) => [file, readFileSync(path.join(chartDir, 'templates', file), 'utf8')]),
  );
  const all = Object.values(templates).join('\n');

  it('is named as its folder, and every template opens and closes its blocks', () => {
    expect(chart.name).toBe(path.basename(chartDir));
    for (const [file, text] of Object.entries(templates)) {
      const opens = [...text.matchAll(/\{\{-?\s*(if|range|with|define)\b/g)].length;
      const ends = [...text.matchAll(/\{\{-?\s*end\s*-?\}\}/g)].length;
      expect(ends, file).toBe(opens);
      expect(text.split('{{').length, file).toBe(text.split('}}').length);
    }
  });

  it('refers only to values that values.yaml has', () => {
    const lookup = (keys: string[]) => keys.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], values);
    for (const match of all.matchAll(/\.Values((?:\.[A-Za-z0-9_]+)+)/g)) {
      expect(lookup(match[1].slice(1).split('.')), match[0]).not.toBeUndefined();
    }
    for (const match of all.matchAll(/\$svc\.([A-Za-z0-9_]+)/g)) {
      for (const [name, subgraph] of Object.entries(values.subgraphs)) expect(subgraph, `${name}.${match[1]}`).toHaveProperty(match[1]);
    }
  });

  it('runs each service by an entry the image has, on its port, with the probes it answers', () => {
    expect(Object.keys(values.subgraphs).sort()).toEqual([...SUBGRAPH_NAMES].sort());
    for (const name of Object.keys(values.subgraphs)) expect(ENTRIES).toContain(name);
    for (const match of all.matchAll(/args: \["([a-z]+)"\]/g)) expect(ENTRIES).toContain(match[1]);
    expect(all).toContain('args: ["gateway"]');
    expect(templates['migrate-job.yaml']).toContain('args: ["migrate"]');
    for (const [name, subgraph] of Object.entries(values.subgraphs)) expect(subgraph.port, name).toBe(ENTRY_PORTS[name]);
    expect(values.edge.port).toBe(ENTRY_PORTS.gateway);
    expect(HEALTH_PATHS.has(values.probes.livenessPath)).toBe(true);
    expect(HEALTH_PATHS.has(values.probes.readinessPath)).toBe(true);
    expect(values.probes).toEqual({ livenessPath: '/livez', readinessPath: '/readyz' });
    expect(() => loadTopologyConfig({ EDGE_WORKERS: String(values.edge.workers) })).not.toThrow();
    expect(() => loadConfig({ DATA_DIR: '/tmp/unused', INTERNAL_SECRET: 'x'.repeat(32), TRUST_PROXY: values.edge.trustProxy })).not.toThrow();
  });

  it('sets only settings the platform reads, secrets from a Secret that has them', () => {
    const names = new Set<string>();
    for (const match of all.matchAll(/- name: ([A-Z][A-Z0-9_]*)\s*$/gm)) names.add(match[1]);
    for (const match of all.matchAll(/- name: \{\{ upper \$name \}\}(_[A-Z]+)/g)) {
      for (const subgraph of Object.keys(values.subgraphs)) names.add(subgraph.toUpperCase() + match[1]);
    }
    expect(names.size).toBeGreaterThan(5);
    for (const name of names) expect(SETTINGS.has(name), name).toBe(true);
    const secretKeys = [...templates['secret.yaml'].matchAll(/^\s+([A-Z_]+): \{\{/gm)].map((match) => match[1]);
    for (const match of all.matchAll(/secretKeyRef: \{[^}]*key: ([A-Z_]+)/g)) expect(secretKeys, match[1]).toContain(match[1]);
    for (const name of ['DATABASE_URL', 'INTERNAL_SECRET']) expect(all).toMatch(new RegExp(`- name: ${name}\\s+valueFrom:\\s+secretKeyRef`));
  });

  it('has the migration as a hook Job, an autoscaler and a disruption budget for the edge, INFERENCE_CONFIG from a ConfigMap', () => {
    const kinds = (text: string) =>
      parseAllDocuments(text.replace(/\{\{[^}]*\}\}/g, 'x'))
        .map((doc) => (doc.toJS() as { kind?: string } | null)?.kind)
        .filter(Boolean);
    expect(kinds(templates['migrate-job.yaml'])).toEqual(['Job']);
    expect(templates['migrate-job.yaml']).toMatch(/helm\.sh\/hook: pre-install,pre-upgrade/);
    expect(kinds(templates['hpa.yaml'])).toEqual(['HorizontalPodAutoscaler']);
    expect(templates['hpa.yaml']).toMatch(/name: \{\{ include "platform.fullname" \. \}\}-edge/);
    expect(kinds(templates['pdb.yaml'])).toEqual(['PodDisruptionBudget']);
    expect(kinds(templates['configmap.yaml'])).toEqual(['ConfigMap']);
    expect(templates['deployments.yaml']).toMatch(/- name: INFERENCE_CONFIG\s+value: \/etc\/platform\/inference\/inference-config\.json/);
    expect(templates['configmap.yaml']).toContain('inference-config.json:');
    for (const probe of ['livenessProbe', 'readinessProbe']) expect(templates['deployments.yaml'].split(probe).length - 1).toBe(2);
  });
});
