import { afterEach, describe, expect, it } from 'vitest';
import {
  type ApiName,
  listOperations,
  type OpenApiDoc,
  prismViolations,
  recordResponseViolations,
  responseSchemaPointer,
  schemaValidator,
} from './index.js';

export type ContractResult = { data?: unknown; error?: unknown; response: Response };

interface Options<Client, Id extends string> {
  api: ApiName;
  doc: OpenApiDoc;
  target: string;
  client: Client & { use(...middleware: ReturnType<typeof recordResponseViolations>[]): void };
  /** One call per operationId of the bundle, through the typed client. */
  cases: Record<Id, (client: Client) => Promise<ContractResult>>;
}

/**
 * The contract suite of one API: a test per operation of the bundle (a missing case fails), each
 * answered with a 2xx the spec declares and a body valid against its schema, with no Prism violation;
 * and after every test of the file, no response that broke the spec (whatever Prism reported for
 * calls made inside the cases or by the error-path tests).
 */
export function defineContractSuite<Client, Id extends string>({ api, doc, target, client, cases }: Options<Client, Id>) {
  const validator = schemaValidator(doc);
  const operations = listOperations(doc);
  const responseViolations: string[] = [];
  client.use(recordResponseViolations(responseViolations));
  afterEach(() => {
    expect(responseViolations.splice(0), 'responses that break the spec').toEqual([]);
  });

  describe(`${api} API through the client against ${target}`, () => {
    it.each(operations.map((o) => [o.operationId, o] as const))('%s', async (operationId, { path, method }) => {
      const call = (cases as Record<string, ((c: Client) => Promise<ContractResult>) | undefined>)[operationId];
      expect(call, `no contract test for operation ${operationId}`).toBeTypeOf('function');
      const { data, error, response } = await (call as (c: Client) => Promise<ContractResult>)(client);
      expect(error, `${operationId} answered ${response.status}: ${JSON.stringify(error)}`).toBeUndefined();
      expect(response.status).toBeGreaterThanOrEqual(200);
      expect(response.status).toBeLessThan(300);
      // Through Prism (mock, or proxy in front of the sandbox) a valid exchange has no violation at all.
      expect(prismViolations(response)).toEqual({ request: [], response: [] });
      const declared = doc.paths[path][method].responses[String(response.status)];
      expect(declared, `status ${response.status} is not in the spec of ${operationId}`).toBeDefined();
      if (data !== undefined) {
        const media = (response.headers.get('Content-Type') ?? '').split(';')[0]?.trim() ?? '';
        expect(Object.keys(declared.content ?? {}), `${operationId} answered ${response.status} as ${media}`).toContain(media);
        expect(validator.validate(responseSchemaPointer(path, method, response.status, media, doc), data)).toBeNull();
      }
    });

    it('covers every operation of the bundle and nothing else', () => {
      expect(Object.keys(cases).sort()).toEqual(operations.map((o) => o.operationId).sort());
    });
  });

  return { validator };
}
