import { DomainError } from '../domain/errors.js';

/** One problem of a request, as in the specs' `ErrorDetail`: where (`body.zone.name`, `query.plan`) and why. */
export interface ErrorDetail {
  field: string;
  reason: string;
}

/**
 * The most problems one refusal names: the first ones found. The specs' `Error.details` holds at most
 * 100; a body of a thousand bad items would otherwise answer outside them.
 */
export const MAX_DETAILS = 50;

export interface HttpErrorOptions {
  /** The problems; past MAX_DETAILS, the first MAX_DETAILS of them. */
  details?: ErrorDetail[];
  /** Send `message` as a text body (the spec's text/plain responses, e.g. `Token required`). */
  text?: boolean;
  headers?: Record<string, string>;
  /** A body other than the `Error` shape (e.g. the manager's observed `{errors: [{msg, field}]}`). */
  body?: unknown;
}

/** A refusal a handler throws before it changes any state: it becomes the response as it is. */
export class HttpError extends Error {
  readonly details?: ErrorDetail[];
  readonly text: boolean;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  constructor(
    readonly status: number,
    message: string,
    options: HttpErrorOptions = {},
  ) {
    super(message);
    this.details = options.details?.slice(0, MAX_DETAILS);
    this.text = options.text === true;
    this.headers = options.headers;
    this.body = options.body;
  }
}

/**
 * Runs a change of the domain on behalf of a request (or awaits it): a DomainError it raises becomes
 * the 400 that names the request field each problem came from, `field` or its item `field[i]`.
 */
export function onField<T>(field: string, change: () => T): T {
  const named = (e: unknown) => {
    if (!(e instanceof DomainError)) return e;
    const details = e.problems.map((p) => ({ field: p.item === undefined ? field : `${field}[${p.item}]`, reason: p.reason }));
    return new HttpError(400, 'Invalid request', { details });
  };
  try {
    const out = change();
    return (
      out instanceof Promise
        ? out.catch((e: unknown) => {
            throw named(e);
          })
        : out
    ) as T;
  } catch (e) {
    throw named(e);
  }
}

/** 400 naming one field. */
export function badRequest(field: string, reason: string, message = 'Invalid request'): HttpError {
  return new HttpError(400, message, { details: [{ field, reason }] });
}
