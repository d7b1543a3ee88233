import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';

// ARCHITECTURE.md is the map a newcomer reads first: its trees of the sandbox's and the test kit's
// sources must name every source file there is, and no file that is gone. A tree is the fenced block
// that starts with `packages/<pkg>/src/`; a line indented two spaces that starts with `<room>/` opens a
// room, and a file name in it (`ports.ts`) is a file of that room, a name with a slash (`domain/logs.ts`)
// one of the package's src, wherever it stands (when it starts with a room: test/… is a test).

const PACKAGES = ['sandbox', 'testkit'] as const;
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const NAME = /[\w.-]+(?:\/[\w.-]+)*\.(?:d\.mts|ts|mts|cts|js|mjs|cjs)\b/g;

/** Every source file under a package's src, relative to that src. */
const sourcesOf = (pkg: string): string[] =>
  readdirSync(join(repoRoot, 'packages', pkg, 'src'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && SOURCE.test(e.name))
    .map((e) =>
      relative(join(repoRoot, 'packages', pkg, 'src'), join(e.parentPath, e.name))
        .split('\\')
        .join('/'),
    )
    .sort();

/** The files a tree of ARCHITECTURE.md names for a package, relative to its src. */
export function namedIn(architecture: string, pkg: string): string[] {
  const block = architecture.match(new RegExp(`\`\`\`\\n(packages/${pkg}/src/\\n[\\s\\S]*?)\`\`\``))?.[1];
  if (!block) throw new Error(`ARCHITECTURE.md has no tree of packages/${pkg}/src/`);
  const lines = block.split('\n').slice(1);
  const rooms = new Set(lines.map((l) => l.match(/^ {2}([\w-]+)\//)?.[1]).filter(Boolean));
  const named = new Set<string>();
  let room = '';
  for (const line of lines) {
    const opens = line.match(/^ {2}([\w-]+)\/(?:\s|$)/);
    if (opens) room = opens[1] as string;
    // The room's own name at the line's start is no file.
    const text = opens ? line.slice(opens[0].length) : line;
    for (const m of text.matchAll(NAME)) {
      const name = m[0];
      // A path into another folder of the repository (a test that guards the room) is no source file.
      if (name.includes('/') && !rooms.has(name.split('/')[0])) continue;
      named.add(name.includes('/') ? name : posix.join(room, name));
    }
  }
  return [...named].sort();
}

describe('ARCHITECTURE.md names every source file of the sandbox and the test kit', () => {
  const architecture = readFileSync(join(repoRoot, 'ARCHITECTURE.md'), 'utf8');

  for (const pkg of PACKAGES) {
    it(`packages/${pkg}/src: none left out, none that is gone`, () => {
      const files = sourcesOf(pkg);
      const named = namedIn(architecture, pkg);
      expect(files.length).toBeGreaterThan(pkg === 'sandbox' ? 90 : 20);
      expect(named).toContain('index.ts');
      expect(
        files.filter((f) => !named.includes(f)),
        `source files ARCHITECTURE.md's tree of packages/${pkg}/src/ does not name: add each with what it does`,
      ).toEqual([]);
      expect(
        named.filter((f) => !files.includes(f)),
        `files ARCHITECTURE.md's tree of packages/${pkg}/src/ names that do not exist: remove or rename them`,
      ).toEqual([]);
    });
  }

  it('reads rooms, names with a room, and refuses a tree that is missing', () => {
    const tree = [
      '```',
      'packages/x/src/',
      '  index.ts        the exports',
      '  host/           starting',
      '    sandbox.ts      startSandbox(); its log is domain/logs.ts, tested by test/host/x.test.ts',
      '  domain/         the state: logs.ts, and',
      '                  state.ts',
      '```',
    ].join('\n');
    expect(namedIn(tree, 'x')).toEqual(['domain/logs.ts', 'domain/state.ts', 'host/sandbox.ts', 'index.ts']);
    expect(() => namedIn(tree, 'y')).toThrow(/no tree of packages\/y\/src/);
  });
});
