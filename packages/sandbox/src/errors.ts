/** One problem of a request, as in the specs' `ErrorDetail`: where (`body.zone.name`, `query.plan`) and why. */
export interface ErrorDetail {
  field: string;
  reason: string;
}

export interface HttpErrorOptions {
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
    this.details = options.details;
    this.text = options.text === true;
    this.headers = options.headers;
    this.body = options.body;
  }
}

/** 400 naming one field. */
export function badRequest(field: string, reason: string, message = 'Invalid request'): HttpError {
  return new HttpError(400, message, { details: [{ field, reason }] });
}
