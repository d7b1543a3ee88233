import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

// An npm registry on loopback that serves the packages this repository installed (pnpm's virtual store,
// node_modules/.pnpm), so that a test can run `npm install` as a user would, offline: npm resolves each
// name against the versions found here and fetches each tarball from here. Nothing leaves the machine;
// a name not installed here answers 404, as a registry does. The tarballs are packed from the installed
// files with tar (package/ as their root, as npm packs them); packuments carry no integrity, so npm
// records that of the tarball it receives.

interface Found {
  dir: string;
  manifest: Record<string, unknown>;
}

/** The fields of a version's manifest that npm reads to resolve and install it. */
const KEPT = [
  'name',
  'version',
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
  'os',
  'cpu',
  'libc',
  'bundleDependencies',
  'deprecated',
] as const;

/** Every package of the virtual store: name -> version -> where its files are. */
function installed(store: string): Map<string, Map<string, Found>> {
  const out = new Map<string, Map<string, Found>>();
  for (const entry of readdirSync(store)) {
    const modules = join(store, entry, 'node_modules');
    if (!existsSync(modules)) continue;
    // `@scope+name@1.2.3_peer@4` holds node_modules/@scope/name; `name@1.2.3` node_modules/name.
    const name = entry.slice(0, entry.indexOf('@', 1)).replace('+', '/');
    const dir = join(modules, name);
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    if (manifest.name !== name || typeof manifest.version !== 'string') continue;
    if (!out.has(name)) out.set(name, new Map());
    out.get(name)?.set(manifest.version, { dir, manifest });
  }
  return out;
}

export interface LocalRegistry {
  url: string;
  /** The names asked for that are not installed here (each a 404). */
  missing: Set<string>;
  close(): Promise<void>;
}

/** Starts the registry on a free loopback port, serving a pnpm virtual store (`<repo>/node_modules/.pnpm`). */
export async function startLocalRegistry(store: string): Promise<LocalRegistry> {
  const packages = installed(store);
  const missing = new Set<string>();
  let url = '';
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0] as string).slice(1);
    const tarball = path.match(/^(.+)\/-\/(.+)\.tgz$/);
    if (tarball) {
      const found = packages.get(tarball[1] as string)?.get(tarball[2] as string);
      if (!found) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const tar = spawn('tar', ['-czf', '-', '-C', found.dir, '--transform', 's,^\\.,package,', '.'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      tar.stdout.pipe(res);
      return;
    }
    const versions = packages.get(path);
    if (!versions) {
      missing.add(path);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    const packument = {
      name: path,
      'dist-tags': { latest: [...versions.keys()].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).at(-1) },
      versions: Object.fromEntries(
        [...versions].map(([version, { manifest }]) => [
          version,
          {
            ...Object.fromEntries(KEPT.filter((k) => manifest[k] !== undefined).map((k) => [k, manifest[k]])),
            dist: { tarball: `${url}/${encodeURIComponent(path).replace('%40', '@')}/-/${version}.tgz` },
          },
        ]),
      ),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, missing, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
