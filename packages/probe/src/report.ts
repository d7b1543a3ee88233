import { BODY_KEPT, type ProbeResult } from './probe.js';

// The report of a run, in Markdown (to paste into an issue) and JSON (to attach), both redacted: the
// run's data first, field by field, then the whole text once more; a text that still holds a known
// secret in any form is never given out.

export interface Report {
  markdown: string;
  json: string;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** The run as data, without the redactor: what the JSON report holds before redaction. */
function data(r: ProbeResult) {
  const { redactor: _, ...rest } = r;
  return {
    ...rest,
    summary: {
      calls: r.exchanges.length,
      findings: r.findings.length,
      byKind: Object.fromEntries(
        [...new Set(r.findings.map((f) => f.kind))].sort().map((k) => [k, r.findings.filter((f) => f.kind === k).length]),
      ),
      skipped: r.skipped.length,
      differences: r.differences.length,
    },
    // Headers and bodies only where something was found: they are what an issue needs.
    exchanges: r.exchanges.map((e) => (e.findings.length ? e : { ...e, headers: undefined, body: undefined })),
  };
}

function markdown(d: ReturnType<typeof data>): string {
  const lines = [
    `# zone-api-probe: ${d.api} API`,
    '',
    `- Probed: ${d.baseUrl} at ${d.startedAt}`,
    `- Spec: the ${d.api} bundle ${d.specVersion}${d.referenceVersion ? `; answers compared with ${d.referenceVersion}` : ''}`,
    d.maxPerMinute
      ? `- Pace: at most ${d.maxPerMinute} requests a minute${d.rateLimit ? ` (documented limit ${d.rateLimit.requests} per ${d.rateLimit.perSeconds} s for ${d.rateLimit.appliesTo})` : ''}`
      : '- Pace: no limit stated for this API',
    `- Calls: ${d.summary.calls}; findings: ${d.summary.findings}${
      d.summary.findings
        ? ` (${Object.entries(d.summary.byKind)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')})`
        : ''
    }; skipped: ${d.summary.skipped}${d.referenceVersion ? `; differences from ${d.referenceVersion}: ${d.summary.differences}` : ''}`,
    '- Credentials, customer ids, Zone passwords, keys, tokens and IP addresses are redacted (`[redacted:…]`).',
    '',
    '## Calls',
    '',
    '| operation | request | status | media type | ms | findings |',
    '|---|---|---|---|---|---|',
    ...d.exchanges.map(
      (e) =>
        `| \`${e.operationId}\` | ${cell(`${e.method} ${e.sent}`)} | ${e.status || 'no answer'} | ${cell(e.media ?? '—')} | ${e.ms} | ${
          e.findings.length ? e.findings.map((f) => f.kind).join(', ') : 'none'
        } |`,
    ),
  ];
  if (d.findings.length) {
    lines.push('', '## Findings', '');
    for (const e of d.exchanges.filter((x) => x.findings.length)) {
      lines.push(`### \`${e.operationId}\`: ${e.method} ${e.sent}`, '');
      for (const f of e.findings) lines.push(`- **${f.kind}**: ${f.message}`);
      lines.push('', `Answer: ${e.status || 'none'} ${e.media ?? '(no Content-Type)'}`, '');
      const headers = Object.entries(e.headers ?? {}).map(([k, v]) => `${k}: ${v}`);
      lines.push('````http', ...headers, '', ...(e.body ? [e.body] : []), '````', '');
    }
  }
  if (d.referenceVersion) {
    lines.push('', `## Differences from ${d.referenceVersion}`, '');
    if (!d.differences.length) lines.push('None: every answer compared has the recorded status, media type, kind of body and fields.');
    else {
      lines.push(`| operation | aspect | ${d.referenceVersion} | this one |`, '|---|---|---|---|');
      for (const x of d.differences)
        lines.push(`| \`${x.operationId}\` | ${x.aspect} | ${cell(x.reference || '—')} | ${cell(x.probed || '—')} |`);
    }
  }
  if (d.skipped.length) {
    lines.push('', '## Not called', '', '| operation | why |', '|---|---|');
    for (const s of d.skipped) lines.push(`| \`${s.operationId}\` | ${cell(s.reason)} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** The report of a run, redacted; throws (naming only the kinds) if a secret would still show. */
export function renderReport(r: ProbeResult): Report {
  // Bodies are cut after redaction (a cut through a secret would leave a part no redaction knows), and
  // what could be the start of an address is dropped from the cut.
  const redacted = r.redactor.redactDeep(data(r));
  const clean = {
    ...redacted,
    exchanges: redacted.exchanges.map((e) =>
      e.body && e.body.length > BODY_KEPT ? { ...e, body: `${e.body.slice(0, BODY_KEPT).replace(/[0-9A-Fa-f.:%]+$/, '')}…` } : e,
    ),
  };
  const out = { markdown: r.redactor.redact(markdown(clean)), json: r.redactor.redact(`${JSON.stringify(clean, null, 2)}\n`) };
  const leaked = [...new Set([...r.redactor.leaks(out.markdown), ...r.redactor.leaks(out.json)])];
  if (leaked.length) throw new Error(`the report would still show a secret (${leaked.join(', ')}); nothing was written`);
  return out;
}
