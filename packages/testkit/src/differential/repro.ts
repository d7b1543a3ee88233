import type { Divergence } from './compare.js';
import { callPath, encodeBody } from './play.js';
import { type Step, TARGET_PORT, WWW_PORT } from './steps.js';

// A divergence as a runnable reproduction: a shell script of curl lines that plays the shrunk
// sequence against a manager (MANAGER=http://127.0.0.1:22999 for the real one or `pnpm sandbox`),
// with the loopback target at TARGET (any HTTP server on loopback), then what each side answered.

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The body text with the manager's and the target's ports spliced in from the shell. */
function shellBody(text: string): string {
  return sq(text)
    .replaceAll(`"${WWW_PORT}"`, `'"$MANAGER_PORT"'`)
    .replaceAll(`"${TARGET_PORT}"`, `'"$TARGET_PORT"'`)
    .replaceAll(WWW_PORT, `'"$MANAGER_PORT"'`)
    .replaceAll(TARGET_PORT, `'"$TARGET_PORT"'`);
}

export function curlLine(step: Step): string {
  const headers = (h: Record<string, string> | undefined) => Object.entries(h ?? {}).map(([k, x]) => `-H ${sq(`${k}: ${x}`)}`);
  if (step.kind === 'traffic')
    return [
      'curl -sS -i',
      ...(step.via === 'connect' ? ['-p'] : []),
      `-x http://127.0.0.1:${step.port}`,
      ...(step.method === 'HEAD' ? ['-I'] : step.method ? [`-X ${step.method}`] : []),
      ...headers(step.headers),
      ...(step.body ? [`--data-raw ${sq(step.body)}`] : []),
      `"$TARGET${step.path}"`,
    ].join(' ');
  const parts = [`curl -sS -i -X ${step.method} "$MANAGER${callPath(step)}"`, ...headers(step.headers)];
  if (step.body) {
    // Encoded with the stand-ins left in; the shell puts the ports in.
    const body = encodeBody(step.body);
    const text = body.text.replaceAll(encodeURIComponent(WWW_PORT), WWW_PORT).replaceAll(encodeURIComponent(TARGET_PORT), TARGET_PORT);
    parts.push(`-H ${sq(`content-type: ${body.type}`)}`, `--data-raw ${shellBody(text)}`);
  }
  return parts.join(' ');
}

export function reproduction(steps: Step[], d: Divergence, meta: { seed: number; path?: string }): string {
  const lines = [
    '#!/bin/sh',
    `# Differential divergence (seed ${meta.seed}${meta.path ? `, path ${meta.path}` : ''}), shrunk to ${steps.length} step(s).`,
    '# Start state: a manager with no ports, an empty HAR log and its start settings. Run against each:',
    '#   MANAGER=http://127.0.0.1:22999 TARGET=http://127.0.0.1:3000 sh repro.sh',
    '# (TARGET: any HTTP server on loopback; `/status/N` paths should answer N.)',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    'MANAGER_PORT=${MANAGER##*:}; TARGET_PORT=${TARGET##*:}',
    ...steps.map((s, i) => `echo '--- step ${i}'; ${curlLine(s)}; echo`),
    '',
    `# Diverges at ${d.step < 0 ? 'the start state' : `step ${d.step} (${d.operation}; input ${d.classes.join(', ')})`}: ${d.differs}`,
    `#   real manager: ${d.real}`,
    `#   sandbox:      ${d.sandbox}`,
  ];
  return lines.join('\n');
}
