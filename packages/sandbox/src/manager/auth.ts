import type { FastifyReply, FastifyRequest } from 'fastify';
import { ipInList, isLoopback } from '../domain/net.js';
import type { Store } from '../domain/state.js';
import type { OperationDef } from '../router/spec.js';
import { HttpError, withinLimits } from '../shared/errors.js';

/**
 * The manager's access rules, as the spec states them, once the body is read (the real manager's body
 * parsers run before its API routes, web_server.js 166-176: a body that is no JSON is a 500 first): an
 * operation whose security names `managerToken` needs the current token (`Authorization: <token>`, no
 * Bearer); one with `x-client-ip-check: true` needs a client IP that is loopback or in `www_whitelist_ips`.
 */
export function authenticateManager(store: Store, req: FastifyRequest, _reply: FastifyReply, op: OperationDef): undefined {
  if (op.credentials.includes('managerToken')) {
    const token = store.manager.token;
    if (!token || req.headers.authorization !== token) throw new HttpError(403, 'Token required', { text: true });
    return undefined;
  }
  if (op.clientIpCheck !== true || isLoopback(req.ip)) return undefined;
  const s = store.manager.settings;
  if (ipInList(req.ip, [...s.www_whitelist_ips, ...s.fixed_whitelist_ips])) return undefined;
  throw new HttpError(
    403,
    `Connection from your IP is forbidden. If you want to access this site ask the administrator to add ${req.ip} to the whitelist.`,
    {
      text: true,
      headers: { 'x-service-block-ip': req.ip },
    },
  );
}

/**
 * The manager's one JSON error body, `{errors: [{msg, field}]}`, for the statuses whose answer the spec
 * declares as JSON (port create and update); every other error of the manager is text.
 */
export function managerErrorBody(op: OperationDef, err: HttpError): unknown {
  if (!op.responses.get(String(err.status))?.media.includes('application/json')) return undefined;
  if (err.details?.some((d) => d.field === 'body.proxy.port' && d.reason.startsWith('must be >='))) {
    return { errors: [{ msg: 'Invalid port. It must be a number >= 1000', field: 'port' }] };
  }
  if (!err.details?.length) return { errors: [{ msg: err.message }] };
  return {
    errors: err.details.map((d) => withinLimits({ msg: `${d.field} ${d.reason}`, field: d.field.replace(/^body\.proxy\./, '') })),
  };
}
