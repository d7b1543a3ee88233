import type { OperationTypes as AccountOperations } from '@zone-api/spec/account';
import type { OperationTypes as ManagerOperations } from '@zone-api/spec/manager';
import { type Operation, operations, schemaValidator } from '@zone-api/spec/model';
import type { AccountAuth } from '../account/auth.js';
import { defaultStatus } from '../router/answers.js';
import type { Answer, Ctx, Handler } from '../router/api-options.js';
import {
  type AccountOperationId,
  type ApiName,
  type ManagerOperationId,
  type OpenApiDoc,
  type OperationDef,
  routesOf,
} from '../router/spec.js';
import { HttpError } from '../shared/errors.js';

// Overrides of single operations for a test (`startSandbox({ overrides: { account: { getBalance } } })`):
// typed by operationId from the spec (the answer's body is one of the operation's declared bodies), and
// each answer checked against the spec when it is sent, since a test double that answers what the real
// service never would proves nothing. An answer the spec refuses is a 500 naming the field.

type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON bodies an operation declares, any status. */
type BodyOf<Op> = Op extends { responses: infer Rs } ? { [S in keyof Rs]: JsonBody<Rs[S]> }[keyof Rs] : never;

/** What an override answers: a declared status and body of its operation. */
export interface OverrideAnswer<Op> extends Omit<Answer, 'body'> {
  body?: BodyOf<Op>;
}
export type Override<Op, A> = (ctx: Ctx<A>) => OverrideAnswer<Op> | undefined | Promise<OverrideAnswer<Op> | undefined>;

export interface Overrides {
  account?: { [Id in AccountOperationId]?: Override<AccountOperations[Id], AccountAuth> };
  manager?: { [Id in ManagerOperationId]?: Override<ManagerOperations[Id], undefined> };
}

/** `/balance` -> `body.balance`, `/zones/0/name` -> `body.zones[0].name`. */
const fieldOf = (instancePath: string) =>
  `body${instancePath
    .split('/')
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('')}`;

/** The overrides of one API as handlers whose answers are checked against the spec. */
export function checkedOverrides<A>(
  api: ApiName,
  doc: OpenApiDoc,
  given: Record<string, unknown>,
  defs: readonly OperationDef[],
): Record<string, Handler<A>> {
  const entries = Object.entries(given).filter(([, h]) => typeof h === 'function') as [string, Handler<A>][];
  if (!entries.length) return {};
  const validator = schemaValidator(doc, { allErrors: false });
  const model = new Map<string, Operation>(operations(doc).map((o) => [o.operationId, o]));
  const out: Record<string, Handler<A>> = {};
  for (const [id, handler] of entries) {
    const op = defs.find((d) => d.operationId === id);
    const m = model.get(id);
    if (!op || !m) throw new Error(`overrides.${api}.${id}: the ${api} API has no operation ${id}`);
    out[id] = async (ctx) => {
      const answer = await handler(ctx);
      const status = answer?.status ?? defaultStatus(op);
      const where = `overrides.${api}.${id}`;
      const code = String(status);
      const declared =
        m.responses.find((r) => r.status === code) ?? m.responses.find((r) => r.status === `${code[0]}XX` || r.status === 'default');
      if (!declared) throw new HttpError(500, `${where} answered status ${status}, which the spec does not declare for ${id}`);
      if (answer?.body !== undefined) {
        const json = declared.content['application/json'];
        if (!json)
          throw new HttpError(
            500,
            `${where} answered a JSON body for status ${status}, where the spec declares ${declared.media.join(', ') || 'none'}`,
          );
        const check = validator.compile(json.schemaPointer);
        if (!check(answer.body)) {
          const e = check.errors?.[0];
          const extra =
            e?.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : '';
          throw new HttpError(
            500,
            `${where} answered a body the spec refuses: ${fieldOf(e?.instancePath ?? '')} ${e?.message ?? 'is invalid'}${extra}`,
            {
              details: [{ field: fieldOf(e?.instancePath ?? ''), reason: `${e?.message ?? 'is invalid'}${extra}` }],
            },
          );
        }
      }
      return answer as Answer | undefined;
    };
  }
  return out;
}

/**
 * An API's handlers as a test starts it: its own, then its typed `overrides` (checked against the spec),
 * then its unchecked `handlers` (`null` removes one: tests of the start-up contract).
 */
export function withOverrides<A>(
  api: ApiName,
  doc: OpenApiDoc,
  base: Record<string, Handler<A>>,
  overrides: Record<string, unknown>,
  handlers: Record<string, Handler<never> | null>,
): Record<string, Handler<A>> {
  const out = { ...base, ...checkedOverrides<A>(api, doc, overrides, routesOf(doc)) };
  for (const [id, h] of Object.entries(handlers)) {
    if (h === null) delete out[id];
    else out[id] = h as Handler<A>;
  }
  return out;
}
