/**
 * An image given as an http(s) URL where the interface or the model takes base64 data URIs only
 * (the spec's image-input table: gateway vision always, Service I models listed as base64-only).
 */
export class ImageInputRefused extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
    this.name = 'ImageInputRefused';
  }
}

/** How an interface takes images given by URL: always, never, or as the model's listing says. */
export type UrlImagePolicy = 'accept' | 'refuse' | 'per-model';
