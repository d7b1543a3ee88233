// What a known version of a program answered, and how an answer of another version differs from it.
// The manager's: the answers of the real local proxy manager 1.570.247 that the real-manager suite
// records (`@zone-api/spec/parity/real-manager.json`), scenario by scenario; the probe compares its
// answer of an operation with the scenario named after the operation (its ordinary call).

/** The shape of one answer: what the recorded answers keep of it. */
export interface AnswerShape {
  status: number;
  /** The media type without parameters, or null when the answer had no Content-Type. */
  media: string | null;
  /** `no answer`: the call got no response in time (status 0). */
  kind: 'none' | 'text' | 'json object' | 'json array' | 'json value' | 'broken json' | 'no answer';
  /** Top-level keys of a JSON object body, sorted. */
  keys?: string[];
}

/** One recorded answer: the scenario it answered and its operation. */
export interface RecordedAnswer extends AnswerShape {
  scenario: string;
  operationId: string;
}

/** The answers of one program's version. */
export interface ReferenceAnswers {
  program: { name: string; version: string };
  answers: RecordedAnswer[];
}

/** Where an answer differs from the recorded one. */
export interface Difference {
  operationId: string;
  aspect: 'status' | 'media type' | 'kind of body' | 'fields';
  reference: string;
  probed: string;
}

/** The shape of an answer from its status, `Content-Type` and body. */
export function shapeOf(status: number, contentType: string | null, body: string): AnswerShape {
  const media = contentType ? (contentType.split(';')[0] ?? '').trim().toLowerCase() || null : null;
  if (status === 0) return { status, media, kind: 'no answer' };
  if (body === '') return { status, media, kind: 'none' };
  if (!/json/i.test(media ?? '')) return { status, media, kind: 'text' };
  try {
    const v = JSON.parse(body);
    if (Array.isArray(v)) return { status, media, kind: 'json array' };
    if (v !== null && typeof v === 'object') return { status, media, kind: 'json object', keys: Object.keys(v).sort() };
    return { status, media, kind: 'json value' };
  } catch {
    return { status, media, kind: 'broken json' };
  }
}

/** Same status, media type, kind of body and, for JSON objects, the same top-level fields. */
export function sameShape(a: AnswerShape, b: AnswerShape): boolean {
  return a.status === b.status && a.media === b.media && a.kind === b.kind && (a.keys ?? []).join() === (b.keys ?? []).join();
}

/** How `probed` differs from the recorded answer of the operation's ordinary call; nothing when none is recorded. */
export function compareShapes(reference: ReferenceAnswers, operationId: string, probed: AnswerShape): Difference[] {
  const known = reference.answers.find((a) => a.scenario === operationId);
  if (!known) return [];
  const out: Difference[] = [];
  const d = (aspect: Difference['aspect'], r: unknown, p: unknown) =>
    out.push({ operationId, aspect, reference: String(r ?? '(none)'), probed: String(p ?? '(none)') });
  if (known.status !== probed.status) d('status', known.status, probed.status);
  if (known.media !== probed.media) d('media type', known.media, probed.media);
  if (known.kind !== probed.kind) d('kind of body', known.kind, probed.kind);
  else if (known.kind === 'json object') {
    const only = (x: string[], y: string[]) => x.filter((k) => !y.includes(k));
    const gone = only(known.keys ?? [], probed.keys ?? []);
    const added = only(probed.keys ?? [], known.keys ?? []);
    if (gone.length || added.length)
      d(
        'fields',
        gone.length ? `also ${gone.map((k) => `\`${k}\``).join(', ')}` : '',
        added.length ? `also ${added.map((k) => `\`${k}\``).join(', ')}` : '',
      );
  }
  return out;
}
