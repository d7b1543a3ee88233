import type { HttpError } from '../errors.js';
import type { OperationDef } from './spec.js';

// How an answer goes out as the operation declares it: its default status, text or JSON errors.

/** An error as one line of text: the message, then each field at fault with the reason. */
export function errorText(err: HttpError): string {
  if (!err.details?.length) return err.message;
  return `${err.message}: ${err.details.map((d) => `${d.field} ${d.reason}`).join('; ')}`;
}

/** The status an answer without an explicit one gets: the operation's first declared 2xx. */
export function defaultStatus(op: OperationDef): number {
  for (const s of op.responses.keys()) if (/^2\d\d$/.test(s)) return Number(s);
  return 200;
}

export function textType(op: OperationDef, status: number, fallback = 'text/plain'): string {
  const media = op.responses.get(String(status))?.media ?? [];
  return `${media.find((m) => m.startsWith('text/')) ?? fallback}; charset=utf-8`;
}

/** Whether the operation declares only a text body for this status (then errors go out as text). */
export function declaresOnlyText(op: OperationDef, status: number): boolean {
  const media = op.responses.get(String(status))?.media;
  return !!media && media.length > 0 && media.every((m) => m.startsWith('text/'));
}
