// @ts-check
// JSON Schema validators (Ajv, 2020-12) against a whole bundle.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/** @import { OpenApiDoc } from './bundles.js' */

// ajv-formats is CommonJS: its default import is the module object in some loaders, the function in others.
const addFormats = /** @type {typeof addFormatsModule.default} */ (/** @type {any} */ (addFormatsModule).default ?? addFormatsModule);

/**
 * An Ajv for JSON Schema 2020-12 (the dialect of OpenAPI 3.1) with the standard formats, the one
 * configuration every validator of the project starts from.
 * @param {import('ajv').Options} [options]  e.g. `{ coerceTypes: true }`; `strict: false` and `allErrors: true` unless given
 */
export function createAjv(options = {}) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * Validators against a whole bundle: `compile(pointer)` gives a validating function for the schema
 * at a pointer (cached), `validate(pointer, data)` the error text or null.
 * @param {OpenApiDoc} doc
 * @param {import('ajv').Options} [options]
 */
export function schemaValidator(doc, options = {}) {
  const ajv = createAjv(options);
  const id = `https://zone-api.local/${encodeURIComponent(doc.info?.title ?? 'api')}.json`;
  ajv.addSchema({ ...doc, $id: id });
  /** @type {Map<string, import('ajv').ValidateFunction>} */
  const cache = new Map();
  /** @param {string} pointer */
  const compile = (pointer) => {
    let fn = cache.get(pointer);
    if (!fn) {
      fn = ajv.compile({ $ref: `${id}#${encodeURI(pointer.replace(/^#/, ''))}` });
      cache.set(pointer, fn);
    }
    return fn;
  };
  return {
    ajv,
    compile,
    /**
     * Validates `data` against the schema at `pointer` (e.g. `#/components/schemas/Zone`); returns error text or null.
     * @param {string} pointer
     * @param {unknown} data
     */
    validate(pointer, data) {
      const fn = compile(pointer);
      return fn(data) ? null : ajv.errorsText(fn.errors, { dataVar: 'data' });
    },
  };
}
