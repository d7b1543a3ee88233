import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';

// The repository's Markdown is its reference: a link into a page or one of its sections that is gone
// (a README split into pages, a heading renamed) is a reader sent nowhere. Every relative link of every
// tracked Markdown file must name a file that exists and, with `#anchor`, a heading of that page (the
// anchors GitHub makes of headings).

/** Tracked Markdown files, relative to the repository. */
const markdownFiles = (): string[] =>
  execFileSync('git', ['ls-files', '-z', '--', '*.md'], { cwd: repoRoot, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f && existsSync(join(repoRoot, f)));

const FENCED = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm;

/** The text outside fenced code blocks and inline code, where a link is a link. */
const prose = (text: string): string => text.replace(FENCED, '').replace(/`[^`\n]*`/g, '');

/**
 * The anchors GitHub makes of a page's headings: lower case, punctuation dropped (inline code's
 * backticks too, its text kept), spaces as hyphens; a repeated one gets -1, -2…
 */
function headingAnchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of readFileSync(join(repoRoot, file), 'utf8')
    .replace(FENCED, '')
    .matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = (m[1] as string)
      .toLowerCase()
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

interface Link {
  from: string;
  url: string;
}

function linksOf(file: string): Link[] {
  const text = prose(readFileSync(join(repoRoot, file), 'utf8'));
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1] as string)
    .filter((url) => !/^[a-z][a-z0-9+.-]*:/i.test(url))
    .map((url) => ({ from: file, url }));
}

/** Why a link does not resolve, or undefined. */
function broken({ from, url }: Link): string | undefined {
  const [pathPart, anchor] = url.split('#', 2) as [string, string | undefined];
  const target = pathPart ? relative(repoRoot, join(repoRoot, dirname(from), decodeURIComponent(pathPart))) : from;
  if (target.startsWith('..')) return `${from}: ${url} leaves the repository`;
  if (!existsSync(join(repoRoot, target))) return `${from}: ${url} names no file (${target})`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(join(repoRoot, target)).isDirectory() || !target.endsWith('.md')) return undefined;
  if (/^L\d+(-L\d+)?$/.test(anchor)) return undefined;
  return headingAnchors(target).has(decodeURIComponent(anchor).toLowerCase()) ? undefined : `${from}: ${url} names no heading of ${target}`;
}

describe('links between Markdown pages', () => {
  const files = markdownFiles();
  const links = files.flatMap(linksOf);

  it('reads the pages and their links', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'packages/sandbox/README.md']));
    // Links with anchors are among them, so that a heading renamed is caught, not only a file removed.
    expect(links.filter((l) => l.url.includes('#')).length).toBeGreaterThan(5);
  });

  it('every relative link names a file that exists, and a heading of it where it has an anchor', () => {
    expect(links.map(broken).filter(Boolean)).toEqual([]);
  });

  it('finds a link that names a heading which is gone', () => {
    expect(broken({ from: 'README.md', url: 'packages/sandbox/README.md#testing-with-the-sandbox-gone' })).toMatch(/names no heading/);
    expect(broken({ from: 'README.md', url: 'packages/sandbox/GONE.md' })).toMatch(/names no file/);
    expect(broken({ from: 'README.md', url: 'ARCHITECTURE.md#the-sandbox' })).toBeUndefined();
    // The sandbox README's sections moved to pages of their own: the old link is gone, the new one resolves.
    expect(broken({ from: 'README.md', url: 'packages/sandbox/README.md#traffic-the-proxy-network-and-ports-that-listen' })).toMatch(
      /names no heading/,
    );
    expect(
      broken({ from: 'README.md', url: 'packages/sandbox/docs/traffic.md#rules-a-ports-rules-applied-to-its-traffic' }),
    ).toBeUndefined();
  });

  it('the testing guide is one click from the root README', () => {
    const guide = 'packages/sandbox/docs/testing-guide.md';
    expect(existsSync(join(repoRoot, guide))).toBe(true);
    expect(linksOf('README.md').map((l) => l.url.split('#')[0])).toContain(guide);
    expect(readFileSync(join(repoRoot, guide), 'utf8')).toMatch(/^# Testing with the sandbox$/m);
  });
});
