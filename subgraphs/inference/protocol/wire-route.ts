import type { Request, Response } from 'express';
import type { Caller } from './caller.js';
import type { WireInterface } from './wire-interface.js';

/** One request on an interface, as a route handler gets it. */
export interface WireCall {
  iface: WireInterface;
  req: Request;
  res: Response;
  caller: Caller;
  /** Aborted when the client goes away before the answer ended. */
  signal: AbortSignal;
}

/** An entry of the interfaces' route table (`/v1/routes` lists the gateway's). */
export interface WireRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  interfaces: readonly WireInterface[];
  summary: string;
  handle: (wire: WireCall) => Promise<void>;
  /** Body limit when it differs from the text routes' (base64 images ride in image bodies). */
  bodyLimit?: string;
  /** multipart/form-data bodies (OpenAI's images/edits): the handler reads the body itself. */
  multipart?: boolean;
}
