import type { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import { IdentityService } from '../platform/identity/identity.service.js';
import type { KeyKind, Principal } from '../subgraphs/shared/principal.js';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/** Why the edge refused a request; each interface words and shapes it its own way. */
export interface EdgeRejection {
  status: 401 | 403;
  code: 'missing_api_key' | 'invalid_api_key' | 'api_key_disabled' | 'api_key_expired' | 'wrong_key_kind';
  message: string;
}

export type RejectionResponder = (req: Request, res: Response, rejection: EdgeRejection) => void;

const REASONS = {
  invalid_key: { code: 'invalid_api_key', message: 'The API key is not valid' },
  key_disabled: { code: 'api_key_disabled', message: 'The API key has been disabled' },
  key_expired: { code: 'api_key_expired', message: 'The API key has expired' },
} as const;

/**
 * Express middleware authenticating `Authorization: Bearer <key>` once at the edge. Accepted
 * keys set `req.principal`; the rest are answered by `reject` in the interface's own format.
 */
export function bearerAuth(identityOrm: MikroORM, options: { kinds: readonly KeyKind[]; reject: RejectionResponder }) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.header('authorization');
    const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
    if (!match) {
      options.reject(req, res, {
        status: 401,
        code: 'missing_api_key',
        message: 'Authentication required: send "Authorization: Bearer <API key>"',
      });
      return;
    }
    try {
      const result = await new IdentityService(identityOrm.em.fork()).authenticate(match[1]);
      if (!result.ok) {
        options.reject(req, res, { status: 401, ...REASONS[result.reason] });
        return;
      }
      if (!options.kinds.includes(result.principal.kind)) {
        options.reject(req, res, {
          status: 403,
          code: 'wrong_key_kind',
          message: `A ${result.principal.kind} key cannot be used here; use a ${options.kinds.join(' or ')} key`,
        });
        return;
      }
      req.principal = result.principal;
      next();
    } catch (error) {
      next(error);
    }
  };
}
