import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox } from '@zone-api/sandbox';
import { freePort, listOperations, loadBundle, repoRoot, resolvePointer, schemaValidator } from '@zone-api/testkit';
import { REAL_MANAGER, type RunningRealManager, startRealManager } from '@zone-api/testkit/real-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createManagerClient, ZoneApiError } from '../../../manager-client/src/index.js';
import { shapeOf } from '../../../probe/src/reference.js';
import { ACCOUNT } from './account.js';
import { type Answer, matrixMarkdown, sameShape } from './parity.js';
import { type ScenarioContext, scenarios } from './scenarios.js';

// The manager contract held to the real local proxy manager (run by `pnpm test:real-manager`, inside
// a network namespace with only loopback). Every operation of the bundle is driven through our client,
// ordinary calls and bad input, and every answer the real program gives must be one the spec
// declares: its status, its media type, its body. The same scenarios then run against the sandbox;
// where the two differ, the difference must be listed, with its reason, in packages/sandbox/parity.yaml.
// What the real program answered is kept as a fixture (packages/spec/parity/real-manager-<version>.json,
// published: the live probe compares a team's manager with it), and the parity matrix is generated from both
// (packages/spec/parity/manager.md). UPDATE_REAL_MANAGER=1 rewrites the fixture and the matrix.

const doc = loadBundle('manager');
const validator = schemaValidator(doc);
const operations = new Map(listOperations(doc).map((o) => [o.operationId, o]));
const fixtureFile = join(repoRoot, 'packages/spec/parity', `real-manager-${REAL_MANAGER.version}.json`);
const parityFile = join(repoRoot, 'packages/sandbox/parity.yaml');
const matrixFile = join(repoRoot, 'packages/spec/parity/manager.md');
const update = process.env.UPDATE_REAL_MANAGER === '1';

interface Exchange {
  status: number;
  media: string | null;
  text: string;
}

/** A fetch that keeps the last answer as it came on the wire. */
function recording() {
  let last: Exchange | undefined;
  const fetch = (async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const res = await globalThis.fetch(input, init);
    last = { status: res.status, media: res.headers.get('Content-Type'), text: await res.clone().text() };
    return res;
  }) as typeof globalThis.fetch;
  return { fetch, take: () => last };
}

/** What the spec says of one answer: nothing when it declares it, else why not. */
function violations(operationId: string, x: Exchange): string[] {
  const op = operations.get(operationId);
  if (!op) return [`no operation ${operationId} in the bundle`];
  const responses = resolvePointer(doc, `#/paths/${op.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${op.method}`).responses as Record<
    string,
    unknown
  >;
  const declared = (responses[String(x.status)] ?? responses.default) as { $ref?: string; content?: Record<string, unknown> } | undefined;
  if (!declared) return [`status ${x.status} is not declared`];
  const response = (declared.$ref ? resolvePointer(doc, declared.$ref) : declared) as { content?: Record<string, unknown> };
  const media = (x.media ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const content = response.content ?? {};
  if (x.text === '' && !x.media)
    return Object.keys(content).length ? [`${x.status} with no body, but the spec declares ${Object.keys(content).join(', ')}`] : [];
  if (!(media in content))
    return [`${x.status} as ${x.media ?? 'no Content-Type'}, but the spec declares ${Object.keys(content).join(', ') || 'no body'}`];
  let body: unknown = x.text;
  if (/json/.test(media)) {
    try {
      body = JSON.parse(x.text);
    } catch {
      return [`${x.status} ${media} body is not JSON`];
    }
  }
  const at = `#/paths/${op.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${op.method}/responses/${x.status in responses ? x.status : 'default'}`;
  const pointer = declared.$ref
    ? `${declared.$ref}/content/${media.replace(/\//g, '~1')}/schema`
    : `${at}/content/${media.replace(/\//g, '~1')}/schema`;
  const error = validator.validate(pointer, body);
  return error ? [`${x.status} ${media} body: ${error}`] : [];
}

async function runAll(baseUrl: string): Promise<{ answers: Answer[]; broken: string[] }> {
  const rec = recording();
  const make = (token?: string) =>
    createManagerClient({ baseUrl, retry: false, timeoutMs: 8000, fetch: rec.fetch, ...(token ? { token } : {}) });
  const ctx: ScenarioContext = {
    client: make(),
    withToken: (token) => make(token),
    raw: (method, path, body) =>
      rec.fetch(`${baseUrl}${path}`, { method, body, headers: body === undefined ? {} : { 'Content-Type': 'application/json' } }),
  };
  const answers: Answer[] = [];
  const broken: string[] = [];
  for (const s of scenarios) {
    const outcome = await s.run(ctx).then(
      () => 'answered',
      (err: unknown) => {
        // A call that gets no answer at all (the real manager's upgrade waits for its cloud): recorded as such.
        if (err instanceof ZoneApiError && err.kind === 'timeout') return 'no answer';
        throw err;
      },
    );
    if (outcome === 'no answer') {
      answers.push({ scenario: s.id, operationId: s.operationId, status: 0, media: null, kind: 'no answer' });
      continue;
    }
    const x = rec.take();
    if (!x) throw new Error(`scenario ${s.id} sent no request`);
    answers.push({ scenario: s.id, operationId: s.operationId, ...shapeOf(x.status, x.media, x.text) });
    for (const v of violations(s.operationId, x)) broken.push(`${s.id} (${s.operationId}): ${v}`);
  }
  return { answers, broken };
}

let real: { answers: Answer[]; broken: string[] };
let sandbox: { answers: Answer[]; broken: string[] };
let manager: RunningRealManager | undefined;

beforeAll(async () => {
  manager = await startRealManager({ wwwPort: await freePort(), ...ACCOUNT });
  try {
    real = await runAll(manager.url);
  } finally {
    await manager.stop();
  }
  const sbx = await startSandbox({ accountPort: 0, managerPort: 0 });
  try {
    sandbox = await runAll(sbx.managerUrl);
  } finally {
    await sbx.close();
  }
}, 300_000);

afterAll(async () => {
  await manager?.stop();
});

describe(`the manager contract against the real local proxy manager ${REAL_MANAGER.version}`, () => {
  it('drives every operation of the bundle', () => {
    expect(new Set(scenarios.map((s) => s.operationId))).toEqual(new Set(operations.keys()));
  });

  it('every answer of the real manager is declared by the spec: status, media type and body', () => {
    expect(real.broken).toEqual([]);
  });

  it('every answer of the sandbox is declared by the spec too', () => {
    expect(sandbox.broken).toEqual([]);
  });

  it('the real answers are the ones recorded in the fixture', () => {
    if (update || !existsSync(fixtureFile))
      writeFileSync(fixtureFile, `${JSON.stringify({ program: REAL_MANAGER, answers: real.answers }, null, 2)}\n`);
    const recorded = JSON.parse(readFileSync(fixtureFile, 'utf8'));
    expect(real.answers).toEqual(recorded.answers);
  });

  it('where the sandbox answers otherwise, parity.yaml says why, and lists nothing that no longer differs', () => {
    // The `differential` list belongs to the differential suite (differential.test.ts); the rest are scenarios.
    const { differential: _, ...listed } = (parse(readFileSync(parityFile, 'utf8')) ?? {}) as Record<string, string>;
    const sandboxBy = new Map(sandbox.answers.map((a) => [a.scenario, a]));
    const differing = real.answers
      .filter((r) => {
        const s = sandboxBy.get(r.scenario);
        return !s || !sameShape(r, s);
      })
      .map((r) => r.scenario);
    const unexplained = differing.filter((id) => !listed[id]).map((id) => `${id}: real ${fmt(real, id)}, sandbox ${fmt(sandbox, id)}`);
    expect(unexplained, 'differences parity.yaml does not list').toEqual([]);
    expect(
      Object.keys(listed).filter((id) => !differing.includes(id)),
      'parity.yaml entries that no longer differ',
    ).toEqual([]);
    const matrix = matrixMarkdown(REAL_MANAGER.version, real.answers, sandbox.answers, listed);
    if (update || !existsSync(matrixFile)) writeFileSync(matrixFile, matrix);
    expect(readFileSync(matrixFile, 'utf8'), 'packages/spec/parity/manager.md is stale: UPDATE_REAL_MANAGER=1 pnpm test:real-manager').toBe(
      matrix,
    );
  });
});

function fmt(run: { answers: Answer[] }, id: string): string {
  const a = run.answers.find((x) => x.scenario === id);
  return a ? `${a.status} ${a.media ?? 'no Content-Type'} (${a.kind}${a.keys ? `: ${a.keys.join(', ')}` : ''})` : 'none';
}
