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

/**
 * The longest texts an error may carry, as the specs bound them: a message (`Error.error`, the
 * manager's `ProxyError.msg` and text answers, 1,024), a field (`ErrorDetail.field`, `ProxyError.field`,
 * 256) and a reason (`ErrorDetail.reason`, 1,024). Every error text is cut to them here, whatever the
 * request held (a 100,000-character name, a list of a thousand bad IPs).
 */
export const ERROR_LIMITS = { message: 1024, field: 256, reason: 1024 } as const;

/**
 * `text` cut to `max` characters (code points, as JSON Schema counts them), saying how long it was;
 * never splitting a surrogate pair.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const long = `… (${text.length} characters)`;
  const note = long.length < max ? long : '';
  let end = max - note.length;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end) + note;
}

/**
 * The bound of each text an error entry may carry, by its name in the specs: the `Error` message and an
 * `ErrorDetail`'s `field` and `reason`, the manager's `ProxyError` `msg` and `field`.
 */
const LIMIT_OF: Readonly<Record<string, number>> = {
  message: ERROR_LIMITS.message,
  msg: ERROR_LIMITS.message,
  field: ERROR_LIMITS.field,
  reason: ERROR_LIMITS.reason,
};

/**
 * An error entry (a detail `{field, reason}`, a manager problem `{msg, field}`) with each of its texts
 * cut to its bound (ERROR_LIMITS): the one cut every refusal's texts pass, whatever form the API gives them.
 */
export function withinLimits<T extends object>(entry: T): T {
  const out = { ...entry } as Record<string, unknown>;
  for (const [name, value] of Object.entries(out)) {
    const max = LIMIT_OF[name];
    if (max !== undefined && typeof value === 'string') out[name] = clip(value, max);
  }
  return out as T;
}

/**
 * `head: problem; problem; …` within `max` characters: the problems that do not fit are counted
 * (`; and 3 more`), the first is cut rather than left out.
 */
export function joinProblems(head: string, problems: readonly string[], max: number = ERROR_LIMITS.message): string {
  let out = head;
  for (let i = 0; i < problems.length; i++) {
    const sep = i === 0 ? ': ' : '; ';
    const left = problems.length - i - 1;
    const tail = left ? `; and ${left} more` : '';
    const next = `${out}${sep}${problems[i]}`;
    if (next.length + tail.length > max) {
      if (i === 0) return clip(next, max - tail.length) + tail;
      return clip(`${out}; and ${problems.length - i} more`, max);
    }
    out = next;
  }
  return clip(out, max);
}

export interface HttpErrorOptions {
  /** The problems; past MAX_DETAILS, the first MAX_DETAILS of them. */
  details?: ErrorDetail[];
  /** Send `message` as a text body (the spec's text/plain responses, e.g. `Token required`). */
  text?: boolean;
  headers?: Record<string, string>;
  /** A body other than the `Error` shape (e.g. the manager's observed `{errors: [{msg, field}]}`). */
  body?: unknown;
}

/**
 * A refusal a handler throws before it changes any state: it becomes the response as it is. Its texts
 * are cut to ERROR_LIMITS here (withinLimits), the one place every refusal passes; a `body` of another
 * form is cut by the same function where it is made (the manager's `{errors}`).
 */
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
    super(clip(message, ERROR_LIMITS.message));
    this.details = options.details?.slice(0, MAX_DETAILS).map((d) => withinLimits({ field: d.field, reason: d.reason }));
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
