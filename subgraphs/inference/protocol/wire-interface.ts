import { UsageInterface } from '../usage/usage-interface.js';

/**
 * The four OpenAI-compatible interfaces, named as the configuration names them. Each has its own
 * error table in the specification: Service T's (and the combined reference's, which the gateway
 * follows) answers a value out of range or of the wrong type with 422; Service I's and its
 * proxy's table has no 422 and answers it with 400.
 */
export type WireInterface = 'serviceT' | 'serviceI' | 'proxy' | 'gateway';

export const WIRE_INTERFACES: readonly WireInterface[] = ['serviceT', 'serviceI', 'proxy', 'gateway'];

/** Whether the interface is reached without a key (its callers are counted by client address). */
export function isKeyless(iface: WireInterface): boolean {
  return iface === 'proxy' || iface === 'gateway';
}

/** The status of a parameter value out of range or of the wrong type, by the interface's table. */
export function badValueStatus(iface: WireInterface): 400 | 422 {
  return iface === 'serviceT' || iface === 'gateway' ? 422 : 400;
}

/** How usage records name the interface. */
export const USAGE_INTERFACE: Record<WireInterface, UsageInterface> = {
  serviceT: UsageInterface.SERVICE_T,
  serviceI: UsageInterface.SERVICE_I,
  proxy: UsageInterface.PROXY,
  gateway: UsageInterface.GATEWAY,
};
