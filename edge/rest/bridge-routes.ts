/** A REST route bound to `Type.field`; `resource` names what a null result was looking for. */
export interface BridgeRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  responseStatus?: 200 | 201;
  resource?: string;
  /** Query parameters read before the bridge, beside the field's arguments (finance reports' `format`). */
  query?: readonly string[];
}

export type BridgeRoutes = Record<string, BridgeRoute>;
