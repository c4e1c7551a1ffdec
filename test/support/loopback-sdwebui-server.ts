import http from 'node:http';
import type net from 'node:net';
import sharp from 'sharp';

/** What the next requests meet; tests change it between calls. */
export interface LoopbackSdWebuiBehaviour {
  /** How long a generation or upscale holds the WebUI's single worker once it starts (an interrupt ends a generation early). */
  jobMs: number;
  /** Wait before answering listings, options and progress. */
  listingDelayMs: number;
  /** Answer txt2img, img2img and extra-single-image with this status and body (the WebUI's 500 body, FastAPI's 422 ...). */
  fail?: { status: number; body: unknown };
  /** Answer the listings (sd-models, samplers, upscalers, options) with this status and body. */
  failListings?: { status: number; body: unknown };
  /** Reset the connection instead of answering a generation. */
  dropConnection?: boolean;
  /** Answer /internal/progress with 404, as a WebUI without task tracking would. */
  noTaskProgress?: boolean;
  /**
   * Answer txt2img and img2img with 200 and this body, written piece by piece: every piece but the
   * last at once, the last once `gate` resolves (absent: at once); `cut` resets the connection
   * instead of writing the last piece.
   */
  rawGeneration?: { pieces: string[]; gate?: Promise<void>; cut?: boolean };
}

export interface RecordedSdWebuiRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  /** Set when the client hung up before the response ended. */
  closedEarly: boolean;
}

export interface LoopbackJob {
  route: string;
  /** The request's force_task_id, or the server's own id for one without. */
  taskId: string;
  /** Whether /sdapi/v1/interrupt stops it (generations: yes; extras: no, as in the WebUI). */
  interruptible: boolean;
  interrupted: boolean;
  end: () => void;
}

export const LOOPBACK_CHECKPOINTS = [
  {
    title: 'v1-5-pruned-emaonly.safetensors [6ce0161689]',
    model_name: 'v1-5-pruned-emaonly',
    hash: '6ce0161689',
    sha256: '6ce0161689b3853acaa03779ec93eafe75a02f4ced659bee03f50797806fa2fa',
    filename: '/srv/webui/models/Stable-diffusion/v1-5-pruned-emaonly.safetensors',
    config: null,
  },
  {
    title: 'sd_xl_base_1.0.safetensors [31e35c80fc]',
    model_name: 'sd_xl_base_1.0',
    hash: '31e35c80fc',
    sha256: '31e35c80fc4829d14f90153f4c74cd59c90b779f6afe05a74cd6120b893f7e5b',
    filename: '/srv/webui/models/Stable-diffusion/sd_xl_base_1.0.safetensors',
    config: null,
  },
];

export const LOOPBACK_SAMPLERS = [
  { name: 'DPM++ 2M', aliases: ['k_dpmpp_2m'], options: { scheduler: 'karras' } },
  { name: 'Euler a', aliases: ['k_euler_a', 'k_euler_ancestral'], options: { uses_ensd: 'True' } },
  { name: 'Euler', aliases: ['k_euler'], options: {} },
];

export const LOOPBACK_UPSCALERS = [
  { name: 'None', model_name: null, model_path: null, model_url: null, scale: 4 },
  { name: 'Lanczos', model_name: null, model_path: null, model_url: null, scale: 4 },
  { name: 'Nearest', model_name: null, model_path: null, model_url: null, scale: 4 },
  { name: 'ESRGAN_4x', model_name: 'ESRGAN_4x', model_path: 'https://github.com/cszn/KAIR/releases/download/v1.0/ESRGAN.pth', model_url: null, scale: 4 },
  { name: 'R-ESRGAN 4x+', model_name: 'R-ESRGAN 4x+', model_path: 'https://github.com/xinntao/Real-ESRGAN/releases/download/v0.1.0/RealESRGAN_x4plus.pth', model_url: null, scale: 4 },
  { name: 'SwinIR 4x', model_name: 'SwinIR 4x', model_path: 'https://github.com/JingyunLiang/SwinIR/releases/download/v0.0/003_realSR_BSRGAN_DFOWMFC_s64w8_SwinIR-L_x4_GAN.pth', model_url: null, scale: 4 },
];

const INTEGER_FIELDS = ['steps', 'width', 'height', 'batch_size', 'n_iter', 'seed'];

/**
 * The colour of the index-th image of a generation with this seed: each image the loopback makes is
 * one solid colour, so tests can tell images and seeds apart by their pixels.
 */
export function loopbackColour(seed: number, index: number): { r: number; g: number; b: number } {
  const value = (seed + index) >>> 0;
  return { r: (value * 37) % 256, g: (value * 91 + 11) % 256, b: (value * 53 + 29) % 256 };
}

/**
 * A loopback server speaking the documented shapes of AUTOMATIC1111's Stable-Diffusion-WebUI API:
 * txt2img and img2img answering real PNGs (one solid colour per image, of the requested size, seed
 * and batch), extra-single-image resizing for real with sharp, sd-models, samplers, upscalers,
 * options, progress, /internal/progress by force_task_id, and interrupt. Like the WebUI it runs one
 * job at a time (the rest wait in a queue), answers validation failures with FastAPI's 422 body and
 * its own failures with `{error, detail, body, errors}`, and silently falls back to its current
 * checkpoint for a name it does not know.
 */
export class LoopbackSdWebuiServer {
  readonly requests: RecordedSdWebuiRequest[] = [];
  /** TCP connections accepted so far (keep-alive reuse keeps this low). */
  connections = 0;
  /** POST /sdapi/v1/interrupt calls received. */
  interrupts = 0;
  behaviour: LoopbackSdWebuiBehaviour = LoopbackSdWebuiServer.defaults();
  /** The job holding the worker, and those waiting behind it. */
  active: LoopbackJob | undefined;
  readonly queued: LoopbackJob[] = [];
  readonly completed = new Set<string>();
  currentCheckpoint = LOOPBACK_CHECKPOINTS[0].title;
  private readonly sockets = new Set<net.Socket>();
  private readonly waiters: { check: () => boolean; resolve: () => void }[] = [];
  private jobCounter = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static defaults(): LoopbackSdWebuiBehaviour {
    return { jobMs: 0, listingDelayMs: 0 };
  }

  /** Starts a server on a free loopback port. */
  static async start(): Promise<LoopbackSdWebuiServer> {
    const server = http.createServer();
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const loopback = new LoopbackSdWebuiServer(server, `http://127.0.0.1:${port}`);
    server.on('connection', (socket) => {
      loopback.connections++;
      loopback.sockets.add(socket);
      socket.on('close', () => loopback.sockets.delete(socket));
    });
    server.on('request', (req, res) => void loopback.handle(req, res));
    return loopback;
  }

  reset(): void {
    this.behaviour = LoopbackSdWebuiServer.defaults();
    this.requests.length = 0;
    this.connections = this.sockets.size;
    this.interrupts = 0;
    this.currentCheckpoint = LOOPBACK_CHECKPOINTS[0].title;
  }

  /** Resolves once the condition holds; it is checked again at every request, job change and early close. */
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  /** The recorded requests to one path. */
  to(path: string): RecordedSdWebuiRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  /** Ends the active job now, as if its generation had finished. */
  finishActive(): void {
    this.active?.end();
  }

  async close(): Promise<void> {
    for (const job of [this.active, ...this.queued]) job?.end();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private changed(): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.check()) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0];
    let body: unknown;
    let malformed = false;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      malformed = true;
    }
    const recorded: RecordedSdWebuiRequest = { method: req.method ?? 'GET', path, headers: req.headers, body: malformed ? text : body, closedEarly: false };
    this.requests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished) recorded.closedEarly = true;
      this.changed();
    });
    this.changed();
    if (malformed) return this.send(res, 422, { detail: [{ loc: ['body', 0], msg: 'Expecting value', type: 'value_error.jsondecode' }] });
    const route = `${req.method} ${path}`;
    const request = (body ?? {}) as Record<string, unknown>;
    const behaviour = this.behaviour;
    switch (route) {
      case 'GET /sdapi/v1/sd-models':
      case 'GET /sdapi/v1/samplers':
      case 'GET /sdapi/v1/upscalers':
      case 'GET /sdapi/v1/options':
        if (behaviour.listingDelayMs > 0) await sleep(behaviour.listingDelayMs);
        if (behaviour.failListings) return this.send(res, behaviour.failListings.status, behaviour.failListings.body);
        return this.send(res, 200, this.listing(path));
      case 'GET /sdapi/v1/progress':
        return this.send(res, 200, this.progress());
      case 'POST /internal/progress':
        if (behaviour.noTaskProgress) return this.send(res, 404, { detail: 'Not Found' });
        return this.send(res, 200, this.taskProgress(String(request.id_task)));
      case 'POST /sdapi/v1/interrupt':
        this.interrupts++;
        if (this.active?.interruptible) {
          this.active.interrupted = true;
          this.active.end();
        }
        this.changed();
        return this.send(res, 200, {});
      case 'POST /sdapi/v1/txt2img':
      case 'POST /sdapi/v1/img2img':
      case 'POST /sdapi/v1/extra-single-image':
        if (behaviour.dropConnection) return void req.socket.destroy();
        if (behaviour.fail) return this.send(res, behaviour.fail.status, behaviour.fail.body);
        if (path === '/sdapi/v1/extra-single-image') return this.extras(res, request);
        if (behaviour.rawGeneration) return this.raw(res, behaviour.rawGeneration);
        return this.generate(res, request, path === '/sdapi/v1/img2img');
    }
    this.send(res, 404, { detail: 'Not Found' });
  }

  private async raw(res: http.ServerResponse, raw: NonNullable<LoopbackSdWebuiBehaviour['rawGeneration']>): Promise<void> {
    res.writeHead(200, { 'content-type': 'application/json' });
    for (const piece of raw.pieces.slice(0, -1)) res.write(piece);
    await raw.gate;
    if (raw.cut) return void res.socket?.destroy();
    res.end(raw.pieces.at(-1));
  }

  private listing(path: string): unknown {
    if (path.endsWith('sd-models')) return LOOPBACK_CHECKPOINTS;
    if (path.endsWith('samplers')) return LOOPBACK_SAMPLERS;
    if (path.endsWith('upscalers')) return LOOPBACK_UPSCALERS;
    return { sd_model_checkpoint: this.currentCheckpoint, samples_format: 'png', jpeg_quality: 80, CLIP_stop_at_last_layers: 1, sd_vae: 'Automatic', eta_noise_seed_delta: 0 };
  }

  private progress(): Record<string, unknown> {
    const job = this.active;
    return {
      progress: job ? 0.5 : 0,
      eta_relative: job ? 1.5 : 0,
      state: { skipped: false, interrupted: false, job: job ? job.route : '', job_count: job ? 1 : 0, job_timestamp: '20261123090000', job_no: 0, sampling_step: job ? 10 : 0, sampling_steps: 20 },
      current_image: null,
      textinfo: null,
    };
  }

  private taskProgress(id: string): Record<string, unknown> {
    const active = this.active?.taskId === id;
    const queued = this.queued.some((job) => job.taskId === id);
    const completed = this.completed.has(id);
    return {
      active,
      queued,
      completed,
      progress: active ? 0.5 : null,
      eta: null,
      live_preview: null,
      id_live_preview: -1,
      textinfo: active ? null : queued ? 'In queue...' : completed ? null : 'Waiting...',
    };
  }

  // The WebUI's queue lock: one job at a time, in arrival order.
  private async runJob(route: string, taskId: string, interruptible: boolean): Promise<LoopbackJob> {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const job: LoopbackJob = { route, taskId, interruptible, interrupted: false, end: () => end() };
    this.queued.push(job);
    this.changed();
    // Wait for every job ahead to end.
    while (this.active || this.queued[0] !== job) await this.until(() => !this.active && this.queued[0] === job);
    this.queued.shift();
    this.active = job;
    this.changed();
    const timer = this.behaviour.jobMs > 0 ? setTimeout(end, this.behaviour.jobMs) : undefined;
    if (!timer) end();
    await ended;
    clearTimeout(timer);
    this.active = undefined;
    this.completed.add(taskId);
    this.changed();
    return job;
  }

  private validation(request: Record<string, unknown>): Record<string, unknown> | undefined {
    for (const field of INTEGER_FIELDS) {
      const value = request[field];
      if (value !== undefined && value !== null && !Number.isInteger(value)) return { detail: [{ loc: ['body', field], msg: 'value is not a valid integer', type: 'type_error.integer' }] };
    }
    if (request.prompt !== undefined && typeof request.prompt !== 'string') return { detail: [{ loc: ['body', 'prompt'], msg: 'str type expected', type: 'type_error.str' }] };
    return undefined;
  }

  private async generate(res: http.ServerResponse, request: Record<string, unknown>, img2img: boolean): Promise<void> {
    const invalid = this.validation(request);
    if (invalid) return this.send(res, 422, invalid);
    const samplerName = (request.sampler_name ?? request.sampler_index ?? 'Euler') as string;
    const sampler = LOOPBACK_SAMPLERS.find((entry) => entry.name === samplerName || entry.aliases.includes(samplerName));
    if (!sampler) return this.httpException(res, 404, 'Sampler not found');
    if (img2img) {
      if (!Array.isArray(request.init_images)) return this.httpException(res, 404, 'Init image not found');
      for (const image of [...request.init_images, ...(request.mask ? [request.mask] : [])]) if (!(await isImage(image))) return this.httpException(res, 500, 'Invalid encoded image');
    }
    const overrides = (request.override_settings ?? {}) as Record<string, unknown>;
    const wanted = overrides.sd_model_checkpoint;
    // The WebUI loads a fallback for a checkpoint it does not know; it does not refuse.
    const checkpoint = LOOPBACK_CHECKPOINTS.find((entry) => entry.title === wanted || entry.model_name === wanted) ?? LOOPBACK_CHECKPOINTS.find((entry) => entry.title === this.currentCheckpoint)!;
    if (request.override_settings_restore_afterwards === false) this.currentCheckpoint = checkpoint.title;
    const taskId = typeof request.force_task_id === 'string' ? request.force_task_id : `task(loopback-${++this.jobCounter})`;
    const job = await this.runJob(img2img ? 'scripts_img2img' : 'scripts_txt2img', taskId, true);
    const width = (request.width as number | undefined) ?? 512;
    const height = (request.height as number | undefined) ?? 512;
    const count = ((request.batch_size as number | undefined) ?? 1) * ((request.n_iter as number | undefined) ?? 1);
    const seed = typeof request.seed === 'number' && request.seed !== -1 ? request.seed : Math.floor(Math.random() * 2 ** 32);
    const images = job.interrupted ? [] : await Promise.all(Array.from({ length: count }, (_, index) => solidPng(width, height, loopbackColour(seed, index))));
    const prompt = (request.prompt as string | undefined) ?? '';
    const allSeeds = Array.from({ length: count }, (_, index) => seed + index);
    const info = {
      prompt,
      all_prompts: allSeeds.map(() => prompt),
      negative_prompt: request.negative_prompt ?? '',
      seed,
      all_seeds: allSeeds,
      subseed: 1234,
      all_subseeds: allSeeds.map(() => 1234),
      subseed_strength: 0,
      width,
      height,
      sampler_name: sampler.name,
      cfg_scale: request.cfg_scale ?? 7,
      steps: request.steps ?? 20,
      batch_size: request.batch_size ?? 1,
      sd_model_name: checkpoint.model_name,
      sd_model_hash: checkpoint.hash,
      denoising_strength: img2img ? (request.denoising_strength ?? 0.75) : null,
      extra_generation_params: {},
      index_of_first_image: 0,
      infotexts: allSeeds.map((s) => `${prompt}\nSteps: ${request.steps ?? 20}, Sampler: ${sampler.name}, Seed: ${s}, Size: ${width}x${height}, Model: ${checkpoint.model_name}`),
      job_timestamp: '20261123090000',
      version: 'v1.10.1',
    };
    const parameters: Record<string, unknown> = { ...request, sampler_name: sampler.name };
    if (img2img && request.include_init_images !== true) Object.assign(parameters, { init_images: null, mask: null });
    this.send(res, 200, { images, parameters, info: JSON.stringify(info) });
  }

  private async extras(res: http.ServerResponse, request: Record<string, unknown>): Promise<void> {
    if (!(await isImage(request.image))) return this.httpException(res, 500, 'Invalid encoded image');
    const name = (request.upscaler_1 as string | undefined) ?? 'None';
    const upscaler = LOOPBACK_UPSCALERS.find((entry) => entry.name === name);
    if (!upscaler) return this.send(res, 500, { error: 'AssertionError', detail: '', body: '', errors: `could not find upscaler named ${name}` });
    await this.runJob('extras', `extras-${++this.jobCounter}`, false);
    const input = Buffer.from(String(request.image).replace(/^data:[^,]*,/, ''), 'base64');
    let image = sharp(input);
    let info = '';
    if (name !== 'None') {
      const { width = 1, height = 1 } = await sharp(input).metadata();
      const factor = (request.upscaling_resize as number | undefined) ?? 2;
      const kernel = name === 'Nearest' ? 'nearest' : 'lanczos3';
      if (request.resize_mode === 1) image = image.resize(request.upscaling_resize_w as number, request.upscaling_resize_h as number, { kernel, fit: 'cover' });
      else image = image.resize(Math.floor(width * factor), Math.floor(height * factor), { kernel, fit: 'fill' });
      info = `<p>Postprocess upscale by: ${factor}, Postprocess upscaler: ${name}</p>`;
    }
    this.send(res, 200, { html_info: info, image: (await image.png().toBuffer()).toString('base64') });
  }

  // The WebUI's handler for an HTTPException: `{error, detail, body, errors: str(e)}` with its status.
  private httpException(res: http.ServerResponse, status: number, detail: string): void {
    this.send(res, status, { error: 'HTTPException', detail, body: '', errors: `${status}: ${detail}` });
  }

  private send(res: http.ServerResponse, status: number, body: unknown): void {
    if (res.destroyed) return;
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}

async function solidPng(width: number, height: number, background: { r: number; g: number; b: number }): Promise<string> {
  const png = await sharp({ create: { width, height, channels: 3, background } }).png().toBuffer();
  return png.toString('base64');
}

async function isImage(value: unknown): Promise<boolean> {
  if (typeof value !== 'string' || value === '') return false;
  try {
    await sharp(Buffer.from(value.replace(/^data:[^,]*,/, ''), 'base64')).metadata();
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
