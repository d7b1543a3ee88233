// What an answer is held to: the media types its operation declares, and one readable message for
// every error, whatever its shape.
import { redact } from './errors.js';
import type { OperationInfo, ResponseError } from './types.js';

/** The media type of a Content-Type value, without its parameters (`application/json; charset=utf-8` → `application/json`). */
const mediaOf = (contentType: string | null) => (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** The longest summary of an error body a `message` quotes (a manager's 404 is a whole web page). */
const MESSAGE_MAX = 500;
const clip = (text: string) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MESSAGE_MAX ? `${line.slice(0, MESSAGE_MAX)}…` : line;
};

/**
 * What a JSON error body says, in one line: the account API's `error` (with the fields at fault of its
 * `details`), the manager's `errors[].msg` (with their `field`), a `message`, else the body itself.
 */
function summary(body: Record<string, unknown>): string {
  const problems = (list: unknown, text: string, where: string) =>
    Array.isArray(list)
      ? list
          .filter((p): p is Record<string, unknown> => p !== null && typeof p === 'object')
          .map((p) => (typeof p[where] === 'string' && p[where] ? `${p[where]}: ${String(p[text])}` : String(p[text])))
      : [];
  if (typeof body.error === 'string') {
    const details = problems(body.details, 'reason', 'field');
    return details.length ? `${body.error} (${details.join('; ')})` : body.error;
  }
  const errors = problems(body.errors, 'msg', 'field');
  if (errors.length) return errors.join('; ');
  if (typeof body.message === 'string') return body.message;
  return JSON.stringify(body);
}

/**
 * Holds an answer to what the operation declares: a 2xx body in an undeclared media type becomes a
 * `ResponseError`, and so does an error answer that is text, has no body or is not a JSON object.
 * Every error gets its one-line `message`.
 */
export function checked(op: OperationInfo, result: { data?: unknown; error?: unknown; response: Response }, secrets: readonly string[]) {
  const { response } = result;
  const contentType = response.headers.get('Content-Type');
  const answered = `${op.method} ${op.path} answered ${response.status}`;
  const fail = (kind: ResponseError['kind'], text: string) => {
    const error = redact(text, secrets);
    const message = kind === 'text' ? `${answered}: ${clip(error) || '(empty text)'}` : error;
    return { error: { kind, status: response.status, contentType, error, message } satisfies ResponseError, response };
  };
  if (response.ok) {
    const declared = op.success[String(response.status)];
    if (result.data === undefined) return result;
    if (!declared?.includes(mediaOf(contentType))) {
      return fail(
        'media-type',
        `${answered} with ${contentType ?? 'no Content-Type'}, which the operation does not declare${
          declared ? ` (it declares ${declared.join(', ') || 'no body'})` : ''
        }`,
      );
    }
    return result;
  }
  if (result.error === undefined || result.error === '') return fail('empty', `${answered} with no body`);
  if (typeof result.error === 'string') return fail('text', result.error);
  if (result.error === null || typeof result.error !== 'object' || Array.isArray(result.error)) {
    return fail('text', JSON.stringify(result.error));
  }
  const body = result.error as Record<string, unknown>;
  // The body was redacted in the transport, so the summary of it is too.
  if (typeof body.message !== 'string') {
    Object.defineProperty(body, 'message', { value: `${answered}: ${clip(summary(body))}`, enumerable: false, configurable: true });
  }
  return result;
}
