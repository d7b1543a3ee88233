#!/usr/bin/env node
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { API_NAMES, type ApiName } from '@zone-api/spec/model';
import { runProbe } from './probe.js';
import type { ReferenceAnswers } from './reference.js';
import { renderReport } from './report.js';

const HELP = `zone-api-probe: your own account API or local proxy manager, held to the published spec

Usage: zone-api-probe account --base-url URL --customer ID   (token in ZONE_API_TOKEN)
       zone-api-probe manager --base-url URL

Calls each operation of the API's bundle that only reads (a GET or HEAD the spec does not mark
\`x-changes-state\`) once, validates every answer against the bundle (status, media type, body, fields
it does not declare, a credential sent back), and writes a report with every credential, customer id,
Zone password, key, token and IP address redacted. For the manager, it also lists where each answer
differs from what the local proxy manager 1.570.247 answers.

  --base-url URL       where the API is (required; there is no default)
  --token TOKEN        the account API token (better: env ZONE_API_TOKEN, kept out of your shell history)
  --customer ID        your account id, sent where an operation takes \`customer\` (env ZONE_API_CUSTOMER)
  --basic USER:PASS    HTTP basic credentials instead of a token (env ZONE_API_BASIC)
  --api-key VALUE      the value of the spec's key header: the Zone credential (account) or the
                       manager token (env ZONE_API_KEY)
  --param NAME=VALUE   a parameter's value in place of the spec's example (repeatable), e.g. zone=my_zone
  --only ID,ID         only these operations (operationIds)
  --brand WORD         the brand word of the manager's user paths (/api/WORD_users; default lpm, the
                       real manager's; pm for a mock of the spec)
  --allow-writes       also call operations that change state or cost money (creates, deletes, refreshes)
  --max-per-minute N   at most N requests a minute (default: half the documented limit of limited
                       trial accounts; never at or above it)
  --timeout-ms N       give up on an answer after N ms (default 30000)
  --out PREFIX         write PREFIX.md and PREFIX.json (default zone-api-probe-<api>)
  -h, --help           this text

Exit status: 0 when every answer conforms, 1 when there are findings, 2 when the probe could not run.
`;

function fail(message: string): never {
  process.stderr.write(`zone-api-probe: ${message}\n`);
  process.exit(2);
}

function number(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) fail(`${name} must be a positive number, not ${value}`);
  return n;
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
  } catch (err) {
    fail(`${(err as Error).message} (--help for usage)`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const api = positionals[0] as ApiName | undefined;
  if (!api || !API_NAMES.includes(api) || positionals.length > 1)
    fail(`name the API to probe: ${API_NAMES.join(' or ')} (--help for usage)`);
  const env = process.env;
  const baseUrl = values['base-url'];
  if (!baseUrl) fail('--base-url is required: the probe reaches only what you point it at');
  const basic = values.basic ?? env.ZONE_API_BASIC;
  const colon = basic?.indexOf(':') ?? -1;
  if (basic !== undefined && colon < 1) fail('--basic takes USER:PASSWORD');
  const params: Record<string, string> = {};
  for (const p of values.param ?? []) {
    const eq = p.indexOf('=');
    if (eq < 1) fail(`--param takes NAME=VALUE, not ${p}`);
    params[p.slice(0, eq)] = p.slice(eq + 1);
  }
  let reference: ReferenceAnswers | undefined;
  if (api === 'manager') {
    const file = createRequire(import.meta.url).resolve('@zone-api/spec/parity/real-manager.json');
    reference = JSON.parse(readFileSync(file, 'utf8')) as ReferenceAnswers;
  }
  const token = values.token ?? env.ZONE_API_TOKEN;
  const apiKey = values['api-key'] ?? env.ZONE_API_KEY;
  const customer = values.customer ?? env.ZONE_API_CUSTOMER;
  const maxPerMinute = number(values['max-per-minute'], '--max-per-minute');
  const timeoutMs = number(values['timeout-ms'], '--timeout-ms');
  let result: Awaited<ReturnType<typeof runProbe>>;
  try {
    result = await runProbe({
      api,
      baseUrl,
      ...(token ? { token } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(customer ? { customer } : {}),
      ...(basic ? { basic: { user: basic.slice(0, colon), password: basic.slice(colon + 1) } } : {}),
      params,
      ...(values.brand ? { brand: values.brand } : {}),
      ...(values.only ? { only: values.only.split(',').map((s) => s.trim()) } : {}),
      allowWrites: values['allow-writes'] === true,
      ...(maxPerMinute !== undefined ? { maxPerMinute } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(reference ? { reference } : {}),
    });
  } catch (err) {
    // A message of ours or of URL parsing; the options' secrets are never part of one.
    fail((err as Error).message);
  }
  const report = renderReport(result);
  const out = values.out ?? `zone-api-probe-${api}`;
  writeFileSync(`${out}.md`, report.markdown);
  writeFileSync(`${out}.json`, report.json);
  const kinds = [...new Set(result.findings.map((f) => f.kind))];
  process.stdout.write(
    `${result.exchanges.length} calls, ${result.findings.length} findings${kinds.length ? ` (${kinds.join(', ')})` : ''}, ${result.skipped.length} not called` +
      `${result.referenceVersion ? `, ${result.differences.length} differences from ${result.referenceVersion}` : ''}\n` +
      `report: ${out}.md and ${out}.json (redacted; attach either to an issue)\n`,
  );
  process.exitCode = result.findings.length ? 1 : 0;
}

function parse() {
  return parseArgs({
    allowPositionals: true,
    strict: true,
    options: {
      'base-url': { type: 'string' },
      token: { type: 'string' },
      customer: { type: 'string' },
      basic: { type: 'string' },
      'api-key': { type: 'string' },
      param: { type: 'string', multiple: true },
      only: { type: 'string' },
      brand: { type: 'string' },
      'allow-writes': { type: 'boolean' },
      'max-per-minute': { type: 'string' },
      'timeout-ms': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

await main();
