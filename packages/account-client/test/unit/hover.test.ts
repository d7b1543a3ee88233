import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

// What an editor shows when the cursor rests on a client method: TypeScript's language service,
// asked for quick info as an editor asks it, on a file that uses both clients.

const dir = mkdtempSync(join(repoRoot, 'packages/account-client/test/unit/.hover-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const source = `import { createAccountClient } from '../../../src/index.js';
import { createManagerClient } from '../../../../manager-client/src/index.js';
const account = createAccountClient({ baseUrl: 'http://x.test', auth: { token: 't' } });
const manager = createManagerClient();
void account.getZone;
void account.getAvailableIpCountShortForm;
void manager.getNewToken;
`;

const file = join(dir, 'use.ts');
writeFileSync(file, source);
let service: ts.LanguageService | undefined;

/** One language service for the file, as an editor keeps one. */
function languageService(): ts.LanguageService {
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [file],
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => (ts.sys.fileExists(f) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(f) ?? '') : undefined),
    getCurrentDirectory: () => repoRoot,
    getCompilationSettings: () => ({
      strict: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      noEmit: true,
    }),
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  };
  service ??= ts.createLanguageService(host);
  return service;
}

function hover(text: string, word: string) {
  const info = languageService().getQuickInfoAtPosition(file, text.indexOf(word) + 1);
  return {
    doc: ts.displayPartsToString(info?.documentation),
    tags: (info?.tags ?? []).map((t) => `@${t.name} ${ts.displayPartsToString(t.text)}`),
  };
}

describe('hovering a client method shows the operation from the spec', () => {
  it('summary, description, method and path, and where its reference page is', () => {
    const { doc } = hover(source, 'getZone;');
    expect(doc).toMatch(/^Get a Zone/);
    expect(doc).toContain('`GET /api/zone`');
    expect(doc).toContain('operationId `getZone`');
    expect(doc).toContain('account.html#operation/getZone');
  });

  it('the deprecated short form is marked @deprecated', () => {
    expect(hover(source, 'getAvailableIpCountShortForm;').tags.join('\n')).toMatch(/@deprecated/);
    expect(hover(source, 'getZone;').tags).toEqual([]);
  });

  it('the manager client too', () => {
    const { doc } = hover(source, 'getNewToken;');
    expect(doc).toContain('`GET /api/gen_token`');
    expect(doc).toMatch(/5 calls an hour/);
  });
});
