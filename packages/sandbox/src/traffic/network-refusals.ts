import { RequestError } from 'proxy-chain';
import { headerBrand } from '../shared/brand.js';

// The emulated network's refusals (network.ts): each a distinct error, named in `x-<brand>-error` /
// `x-<brand>-err-code` and in an RFC 9209 `Proxy-Status`.

/** The refusals of the network: code, status, RFC 9209 error type. */
const REFUSALS = {
  auth_failed: [407, 'http_request_denied'],
  account_suspended: [403, 'http_request_denied'],
  zone_disabled: [403, 'http_request_denied'],
  client_ip_forbidden: [403, 'http_request_denied'],
  domain_forbidden: [403, 'http_request_denied'],
  egress_refused: [403, 'destination_ip_prohibited'],
  no_peers: [502, 'destination_unavailable'],
  target_unreachable: [502, 'connection_refused'],
} as const;
export type RefusalCode = keyof typeof REFUSALS;

export function refuse(brand: string, code: RefusalCode, message: string): RequestError {
  const [status, type] = REFUSALS[code];
  const b = headerBrand(brand);
  const headers: Record<string, string> = {
    [`x-${b}-error`]: message,
    [`x-${b}-err-code`]: code,
    'proxy-status': `zone-api-sandbox; error=${type}; details="${code}"`,
  };
  if (status === 407) headers['proxy-authenticate'] = 'Basic realm="zone-api sandbox proxy network"';
  return new RequestError(message, status, headers);
}
