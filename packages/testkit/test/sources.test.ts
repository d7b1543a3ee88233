import { join } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

// The shape of the sandbox's and the test kit's sources, as a newcomer reads them: no import circle
// (a module and one it imports, directly or through others, importing each other cannot be read one
// before the other). Read by madge over each package's src, type-only imports included: a circle of
// types is still a circle to the reader.

const PACKAGES = ['sandbox', 'testkit'] as const;

/** The import graph of one package's sources: each file (relative to its src) and the files it imports. */
async function graphOf(pkg: (typeof PACKAGES)[number]) {
  const result = await madge(join(repoRoot, 'packages', pkg, 'src'), {
    fileExtensions: ['ts', 'mts', 'js', 'mjs', 'cjs'],
    tsConfig: join(repoRoot, 'tsconfig.typecheck.json'),
    detectiveOptions: { ts: { skipTypeImports: false }, es6: { skipTypeImports: false } },
  });
  return { graph: result.obj(), circles: result.circular() };
}

describe('import circles', () => {
  for (const pkg of PACKAGES) {
    it(`none in packages/${pkg}/src`, async () => {
      const { graph, circles } = await graphOf(pkg);
      // The graph was read: every source file is in it, and imports between them (a type-only one too) are edges.
      expect(Object.keys(graph).length).toBeGreaterThan(pkg === 'sandbox' ? 90 : 15);
      if (pkg === 'sandbox') {
        expect(graph['host/sandbox.ts']).toContain('domain/state.ts');
        // `import type { PortRequest } from './port-context.js'`: type-only, still an edge.
        expect(graph['traffic/port-failure.ts']).toContain('traffic/port-context.ts');
      } else expect(graph['contract.ts']).toContain('index.ts');
      expect(circles, `import circles: ${circles.map((c) => c.join(' -> ')).join('; ')}`).toEqual([]);
    }, 120_000);
  }
});
