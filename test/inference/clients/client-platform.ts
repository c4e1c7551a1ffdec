import { rm } from 'node:fs/promises';
import { inferenceConfigFrom } from '../../../subgraphs/inference/config/load-inference-config.js';
import { llamaInferenceConfig, modelsReady } from '../../support/inference-config.js';
import { LoopbackOpenAiServer } from '../../support/loopback-openai-server.js';
import { LoopbackSdWebuiServer } from '../../support/loopback-sdwebui-server.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

/**
 * One platform for a client library's tests: provider_a runs the embedded llama.cpp (random-weight
 * `tiny`), provider_b is a loopback speaking vLLM's wire format, provider_d a loopback speaking the
 * WebUI's. Every mount serves both text providers, so each test runs on each mount over each engine.
 */
export interface ClientPlatform {
  platform: TestPlatform;
  vllm: LoopbackOpenAiServer;
  webui: LoopbackSdWebuiServer;
  textKey: string;
  close(): Promise<void>;
}

export const EMBEDDED_MODEL = 'tiny';
export const VLLM_MODEL = 'vllm-model';
/** The loopback vLLM's answer, whole. */
export const VLLM_REPLY = 'Hello, loopback world.';

export async function startClientPlatform(): Promise<ClientPlatform> {
  const [vllm, webui] = await Promise.all([LoopbackOpenAiServer.start('vllm', [{ id: VLLM_MODEL, contextLength: 4096 }]), LoopbackSdWebuiServer.start()]);
  const built = await llamaInferenceConfig({}, { sequences: 4, contextSize: 2048 });
  const text = ['provider_a', 'provider_b'];
  const config = inferenceConfigFrom(
    {
      modelsDir: built.modelsDir,
      providers: [
        { id: 'provider_a', name: 'A', engines: [{ type: 'llama', sequences: 4, contextSize: 2048, threads: 1 }] },
        // A vLLM started with --enable-auto-tool-choice: its models call tools.
        { id: 'provider_b', name: 'B', engines: [{ type: 'openai-upstream', url: vllm.url, flavour: 'vllm', tools: true, timeouts: { connectMs: 2_000 } }] },
        { id: 'provider_d', name: 'D', engines: [{ type: 'sd-webui', url: webui.url }] },
      ],
      interfaces: {
        serviceT: { providers: text },
        serviceI: { providers: [...text, 'provider_d'] },
        proxy: { providers: [...text, 'provider_d'] },
        gateway: { providers: [...text, 'provider_d'], defaultProvider: 'provider_a', imageListingProvider: 'provider_d' },
      },
    },
    null,
  );
  let platform: TestPlatform | undefined;
  try {
    platform = await startTestPlatform({ inference: config });
    await modelsReady(platform.baseUrl);
    const textKey = await platform.issueKey('acme', 'text');
    const started = platform;
    return {
      platform: started,
      vllm,
      webui,
      textKey,
      close: async () => {
        await started.close();
        await Promise.all([vllm.close(), webui.close(), rm(built.modelsDir, { recursive: true, force: true })]);
      },
    };
  } catch (error) {
    await platform?.close();
    await Promise.all([vllm.close(), webui.close(), rm(built.modelsDir, { recursive: true, force: true })]);
    throw error;
  }
}

/** The four OpenAI-compatible mounts with the key each takes. */
export const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', keyed: true },
  { name: 'Service I', mount: '/inference/image', keyed: true },
  { name: 'the proxy', mount: '/inference/proxy', keyed: false },
  { name: 'the gateway', mount: '/inference/gateway', keyed: false },
] as const;

/** Each mount over each engine, for describe.each. */
export const ROUTES = MOUNTS.flatMap((mount) => [
  { ...mount, engine: 'the embedded llama.cpp', model: EMBEDDED_MODEL, embedded: true },
  { ...mount, engine: 'a vLLM upstream', model: VLLM_MODEL, embedded: false },
]);

/** The base URL a client library is given for a mount. */
export const baseUrlOf = (running: ClientPlatform, mount: string) => `${running.platform.baseUrl}${mount}/v1`;

/** The key a client library is given for a mount (the keyless mounts take anything). */
export const keyOf = (running: ClientPlatform, keyed: boolean) => (keyed ? running.textKey : 'unused');
