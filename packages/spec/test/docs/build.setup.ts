import { execFile } from 'node:child_process';
import { repoRoot } from '@zone-api/testkit';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why `pnpm docs:build` failed, or '' when the pages are built. */
    docsBuildError: string;
  }
}

/**
 * The docs project's pages, built once for all its files (each file used to build them again).
 * A failed build does not stop the run: each file's setup throws the reason, so every test fails and
 * says why.
 */
export default async function setup(project: TestProject) {
  // The command as the READMEs write it (a script named `docs` would run pnpm's own `docs` command).
  const error = await new Promise<string>((resolve) =>
    execFile('pnpm', ['docs:build'], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve(err ? `pnpm docs:build failed (${err.code ?? err.message}): ${stdout}${stderr}` : ''),
    ),
  );
  project.provide('docsBuildError', error);
}
