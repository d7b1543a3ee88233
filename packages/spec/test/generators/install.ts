import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// The generated clients installed as their READMEs tell a user, in folders outside the repository:
// Python's wheels into a virtual environment with no package index, Go's modules into a user's module
// through a Go workspace (no `replace`, GOPROXY and GOFLAGS left alone).

/** The environment of a user's shell: none of the variables this repository's tools set to find packages. */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of [
    'PYTHONPATH',
    'PYTHONHOME',
    'PIP_INDEX_URL',
    'PIP_EXTRA_INDEX_URL',
    'PIP_FIND_LINKS',
    'GOPROXY',
    'GOFLAGS',
    'GONOSUMDB',
    'GOSUMDB',
    'GOWORK',
  ])
    delete env[k];
  return { ...env, PIP_DISABLE_PIP_VERSION_CHECK: '1', ...extra };
}

/** The first fenced block of a language in a README (the example a user copies). */
export function readmeBlock(readme: string, lang: string): string {
  const m = readFileSync(readme, 'utf8').match(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm'));
  if (!m?.[1]) throw new Error(`${readme} has no \`\`\`${lang} block`);
  return m[1];
}

/**
 * A new virtual environment in `dir` with the wheels installed as the README says: no index, the
 * dependencies found among the packages the system's Python already has. Returns its python.
 */
export function pythonVenv(dir: string, wheels: string[]): string {
  execFileSync('python3', ['-m', 'venv', '--system-site-packages', join(dir, '.venv')], { env: userEnv(), stdio: 'pipe' });
  const python = join(dir, '.venv/bin/python');
  const pip = spawnSync(python, ['-m', 'pip', 'install', '--no-index', ...wheels], { env: userEnv(), encoding: 'utf8' });
  if (pip.status !== 0) throw new Error(`pip install --no-index ${wheels.join(' ')} failed:\n${pip.stdout}${pip.stderr}`);
  return python;
}

/**
 * A user's module in `dir` (its go.mod, the program as main.go) that uses the generated modules through
 * a Go workspace, as the Go README says: `go work init . <client>…`, plus the offline sources of
 * x/oauth2 and x/net from Debian's golang-golang-x-oauth2-dev.
 */
export function goUserModule(dir: string, module: string, program: string, clients: string[], gocode: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'go.mod'), `module ${module}\n\ngo 1.19\n`);
  writeFileSync(join(dir, 'main.go'), program);
  const env = userEnv();
  execFileSync('go', ['work', 'init', '.', ...clients], { cwd: dir, env, stdio: 'pipe' });
  execFileSync('go', ['work', 'use', `${gocode}/golang.org/x/oauth2`, `${gocode}/golang.org/x/net`], { cwd: dir, env, stdio: 'pipe' });
}

/** `go build` in a user's module with the user's environment; the error names what failed. */
export function goBuild(dir: string, out: string): void {
  const res = spawnSync('go', ['build', '-o', out, '.'], { cwd: dir, env: userEnv(), encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`go build in ${dir} failed:\n${res.stdout}${res.stderr}`);
}

/** The GOPATH-style source root of Debian's Go packages, from the file list of golang-golang-x-oauth2-dev. */
export function debianGocode(): string {
  const files = spawnSync('dpkg', ['-L', 'golang-golang-x-oauth2-dev'], { encoding: 'utf8' }).stdout ?? '';
  const oauth2 = files.split('\n').find((f) => f.endsWith('/golang.org/x/oauth2/oauth2.go'));
  if (!oauth2) throw new Error('golang-golang-x-oauth2-dev is not installed: run `bash scripts/setup.sh` as root, or set GOCODE_DIR');
  return oauth2.slice(0, -'/golang.org/x/oauth2/oauth2.go'.length);
}
