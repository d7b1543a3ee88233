import { createAjv } from '@zone-api/spec/model';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { FIELDS_PER_PIECE, yieldToLoop } from '../shared/in-pieces.js';
import {
  ALIAS_KEYWORD,
  COMPOSITIONS,
  discriminate,
  fieldName,
  isClientObserved,
  type Json,
  OBSERVED_VALUES,
  resolve,
  rootNamesOf,
  SUBSCHEMA_MAPS,
  SUBSCHEMAS,
  unesc,
  VALUE_ALIASES,
} from './lenient-schema.js';
import type { OpenApiDoc } from './spec.js';

/** What one check of a request part found. */
export type CheckResult = { ok: true; ignored: string[]; normalized: string[] } | { ok: false; errors: ErrorObject[] | null | undefined };

interface Compiled {
  closed: ValidateFunction;
  lenient: ValidateFunction;
  /** Schema paths (in `closed`) of the object nodes closed by the sandbox: only their errors are "unknown field". */
  closures: Set<string>;
  /** `<closure path> <field>` of the fields `closed` leaves out as client-observed: accepted (and kept) without `--strict`. */
  observed: Set<string>;
  /**
   * Every field name the schemas that apply to the body itself (not to its fields) name, when the only
   * closure there is the root's and nothing there reads the fields it does not name (see rootNamesOf):
   * a field of the body not in it is ignored whatever the rest of the body is. Undefined otherwise.
   */
  rootNames: Set<string> | undefined;
}

/** What setAsideInPieces took out of a body: the body's field names in order and those set aside. */
interface SetAside {
  keys: string[];
  aside: Set<string>;
}

/**
 * The request schemas of a bundle, compiled twice from the same source, both with Ajv:
 *
 * - **closed**: every object schema in a request (one that is not a branch of `allOf`/`anyOf`/`oneOf`,
 *   where closing would hide its siblings' fields) refuses fields it does not name
 *   (`unevaluatedProperties: false`), whether or not the spec closes it. This is `--strict`.
 * - **lenient**: the same schemas with those closures removed, so a field the documentation does not name is
 *   accepted; and with the `VALUE_ALIASES`. Branches of a composition keep the closures the spec
 *   gives them: there they tell the forms of a body apart (`oneOf` of two closed objects).
 *
 * Without `--strict` a request part is valid when the lenient schema accepts it; the closed schema's
 * `unevaluatedProperties` errors at the closures then name exactly the fields ignored, which are
 * removed before the handler sees the body. Everything else (types, required fields, enums, formats)
 * is validated alike in both.
 */
export class RequestChecker {
  private readonly closedAjv: Ajv2020;
  private readonly lenientAjv: Ajv2020;
  private readonly compiled = new Map<string, Compiled>();
  private normalized: string[] | undefined;
  /** Collects `Compiled.observed` while a closed schema is built. */
  private observedFields = new Set<string>();

  constructor(
    private readonly doc: OpenApiDoc,
    private readonly id: string,
  ) {
    const options = { strict: false, allErrors: true, validateFormats: true, coerceTypes: false, useDefaults: false } as const;
    this.closedAjv = createAjv(options);
    this.lenientAjv = createAjv(options);
    // Only self-references that cannot be inlined point back into the bundle: both see it as it is.
    this.closedAjv.addSchema({ ...doc, $id: id });
    this.lenientAjv.addSchema({ ...doc, $id: id });
    this.lenientAjv.addKeyword({
      keyword: ALIAS_KEYWORD,
      modifying: true,
      schemaType: 'object',
      validate: (aliases: Record<string, string>, data: unknown, _parent: unknown, cxt?: Json) => {
        if (typeof data === 'string' && Object.hasOwn(aliases, data) && cxt?.parentData !== undefined) {
          cxt.parentData[cxt.parentDataProperty] = aliases[data];
          this.normalized?.push(`${cxt.instancePath} (${data} -> ${aliases[data]})`);
        }
        return true;
      },
    });
  }

  /**
   * Checks the part of a request whose schema is at `pointer` in the bundle. `prefix` names the part in
   * field names (`body`, `query.plan`). Without `strict`, ignored fields are deleted from `data` and
   * aliased values replaced, in place.
   */
  check(pointer: string, data: unknown, prefix: string, strict: boolean): CheckResult {
    const c = this.compile(pointer);
    const setAside = !strict && data && typeof data === 'object' ? this.setAside.get(data) : undefined;
    if (setAside) this.setAside.delete(data as object);
    if (c.closed(data))
      return {
        ok: true,
        ignored: setAside ? setAside.keys.filter((k) => setAside.aside.has(k)).map((k) => fieldName(prefix, '', k)) : [],
        normalized: [],
      };
    if (strict) return { ok: false, errors: c.closed.errors };
    const closedErrors = c.closed.errors ?? [];
    // The fields of the body itself that the closed schema found unknown, when some were set aside.
    const rootProps = setAside ? new Set<string>() : undefined;
    this.normalized = [];
    // The alias keyword records into this array while `lenient` runs (Ajv validates synchronously).
    const ok = c.lenient(data) as boolean;
    const normalized = this.normalized.map((p) => fieldName(prefix, p));
    this.normalized = undefined;
    if (!ok) return { ok: false, errors: c.lenient.errors };
    // Linear in the unknown fields (a body may carry tens of thousands): a set of the names seen, and each
    // object's place in the body and field name found once, not once per field.
    const ignored = new Set<string>();
    const removals: Array<[Json, string]> = [];
    const objects = new Map<string, { parent: Json; name: string }>();
    for (const e of closedErrors) {
      if (e.keyword !== 'unevaluatedProperties') continue;
      const closure = e.schemaPath.replace(/\/unevaluatedProperties$/, '');
      if (!c.closures.has(closure)) continue;
      const prop = (e.params as { unevaluatedProperty: string }).unevaluatedProperty;
      if (c.observed.has(`${closure} ${prop}`)) continue;
      if (rootProps && e.instancePath === '') {
        if (Object.hasOwn(data as object, prop)) rootProps.add(prop);
        continue;
      }
      let at = objects.get(e.instancePath);
      if (!at) {
        const parent = e.instancePath
          .split('/')
          .slice(1)
          .reduce((o: Json, k) => o?.[unesc(k)], data);
        at = { parent, name: fieldName(prefix, e.instancePath) };
        objects.set(e.instancePath, at);
      }
      const { parent } = at;
      if (parent && typeof parent === 'object' && Object.hasOwn(parent, prop)) {
        const name = fieldName(at.name, '', prop);
        if (!ignored.has(name)) {
          ignored.add(name);
          removals.push([parent, prop]);
        }
      }
    }
    if (rootProps && setAside) {
      // Ajv lists the unknown fields of the body itself after those of its parts (`unevaluatedProperties`
      // runs last) and in the body's order: those it found and those set aside, in the order of the body as sent.
      for (const k of setAside.keys)
        if (setAside.aside.has(k) || rootProps.has(k)) {
          ignored.add(fieldName(prefix, '', k));
          if (rootProps.has(k)) removals.push([data, k]);
        }
    }
    for (const [parent, prop] of removals) delete parent[prop];
    return { ok: true, ignored: [...ignored], normalized };
  }

  /** The bodies setAsideInPieces made, and what it set aside of each. */
  private readonly setAside = new WeakMap<object, SetAside>();

  /**
   * Without `--strict`, a large body's fields that the schema at `pointer` cannot name (see
   * `Compiled.rootNames`) set aside in pieces of FIELDS_PER_PIECE, the event loop let go of between them:
   * the answer is the body without them (its other fields in their order, the same values), which `check`
   * then validates (Ajv sees a small body) and reports as if it had checked the whole one: the fields set
   * aside are ignored and listed where Ajv would list them, among the body's own ignored fields in their
   * order. Undefined where nothing can be set aside so (the body is then checked whole).
   */
  async setAsideInPieces(pointer: string, data: unknown): Promise<Record<string, unknown> | undefined> {
    if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
    const names = this.compile(pointer).rootNames;
    if (!names) return undefined;
    const keys = Object.keys(data);
    if (keys.length <= FIELDS_PER_PIECE) return undefined;
    const src = data as Record<string, unknown>;
    const kept: Record<string, unknown> = {};
    const aside = new Set<string>();
    for (let at = 0; at < keys.length; at += FIELDS_PER_PIECE) {
      await yieldToLoop();
      const end = Math.min(at + FIELDS_PER_PIECE, keys.length);
      for (let i = at; i < end; i++) {
        const k = keys[i] as string;
        if (!names.has(k)) aside.add(k);
        else if (k === '__proto__') Object.defineProperty(kept, k, { value: src[k], enumerable: true, writable: true, configurable: true });
        else kept[k] = src[k];
      }
    }
    this.setAside.set(kept, { keys, aside });
    return kept;
  }

  private compile(pointer: string): Compiled {
    let c = this.compiled.get(pointer);
    if (!c) {
      const closures = new Set<string>();
      const root = resolve(this.doc, pointer);
      this.observedFields = new Set();
      const closed = this.transform(root, 'closed', '#', pointer, closures, [pointer]);
      const observed = this.observedFields;
      const lenient = this.transform(root, 'lenient', '#', pointer, new Set(), [pointer]);
      c = {
        closed: this.closedAjv.compile(closed),
        lenient: this.lenientAjv.compile(lenient),
        closures,
        observed,
        rootNames: rootNamesOf(lenient, closures),
      };
      this.compiled.set(pointer, c);
    }
    return c;
  }

  /**
   * A copy of a schema with its `$ref`s inlined (a schema inlined once per use, so that closing it
   * here does not close it where it is a branch), closed or opened as `mode` says. `at` is the
   * copy's schema path, as Ajv reports it in errors; `src` the node's pointer in the bundle.
   */
  private transform(
    node: Json,
    mode: 'closed' | 'lenient',
    at: string,
    src: string,
    closures: Set<string>,
    refs: string[],
    member = false,
  ): Json {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
    let source = node;
    const ownRef = typeof node.$ref === 'string' && node.$ref.startsWith('#/') ? (node.$ref as string) : undefined;
    let refStack = refs;
    let from = src;
    if (ownRef) {
      // A schema that refers to itself: keep the reference (into the bundle as it is) rather than loop.
      if (refs.includes(ownRef)) return { ...node, $ref: `${this.id}${ownRef}` };
      const { $ref: _ref, ...siblings } = node;
      source = { ...resolve(this.doc, ownRef), ...siblings };
      refStack = [...refs, ownRef];
      from = ownRef;
    }
    const sub = (v: Json, path: string, isMember = false) =>
      this.transform(v, mode, `${at}/${path}`, `${from}/${path}`, closures, refStack, isMember);
    const out: Json = {};
    for (const [key, value] of Object.entries<Json>(source)) {
      if ((SUBSCHEMA_MAPS as readonly string[]).includes(key) && value && typeof value === 'object') {
        const kept = Object.entries<Json>(value).filter(([k, v]) => {
          const drop = mode === 'closed' && key === 'properties' && isClientObserved(v?.$ref ? { ...resolve(this.doc, v.$ref), ...v } : v);
          if (drop) this.observedFields.add(`${at} ${k}`);
          return !drop;
        });
        out[key] = Object.fromEntries(kept.map(([k, v]) => [k, sub(v, `${key}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`)]));
      } else if ((COMPOSITIONS as readonly string[]).includes(key) && Array.isArray(value)) {
        out[key] = value.map((v, i) => sub(v, `${key}/${i}`, true));
        if (key !== 'allOf') discriminate(out[key]);
      } else if (key === 'prefixItems' && Array.isArray(value)) {
        out[key] = value.map((v, i) => sub(v, `${key}/${i}`));
      } else if ((SUBSCHEMAS as readonly string[]).includes(key) && value && typeof value === 'object') {
        out[key] = sub(value, key);
      } else out[key] = value;
    }
    if (mode === 'closed' && Array.isArray(out.enum) && Array.isArray(out[OBSERVED_VALUES])) {
      const observed = out[OBSERVED_VALUES] as unknown[];
      out.enum = out.enum.filter((v: unknown) => !observed.includes(v));
    }
    const alias = mode === 'lenient' ? VALUE_ALIASES.find((a) => a.schema === from) : undefined;
    if (alias) {
      if (Array.isArray(out.enum)) out.enum = [...out.enum, ...Object.keys(alias.aliases)];
      out[ALIAS_KEYWORD] = alias.aliases;
    }
    const hasMap = (out.additionalProperties && out.additionalProperties !== false) || out.patternProperties;
    const isObject = out.properties || COMPOSITIONS.some((k) => Array.isArray(out[k]));
    if (!member && isObject && !hasMap) {
      delete out.additionalProperties;
      delete out.unevaluatedProperties;
      if (mode === 'closed') {
        out.unevaluatedProperties = false;
        closures.add(at);
      }
    }
    return out;
  }
}

const checkers = new WeakMap<OpenApiDoc, RequestChecker>();

/** One checker per bundle: its compiled schemas depend only on the bundle (several sandboxes in one process share them). */
export function requestCheckerFor(doc: OpenApiDoc, id: string): RequestChecker {
  let c = checkers.get(doc);
  if (!c) {
    c = new RequestChecker(doc, id);
    checkers.set(doc, c);
  }
  return c;
}
