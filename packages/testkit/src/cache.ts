import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where a suite keeps what it can reuse between runs, keyed by the hash of everything that decides it
 * (an outside project's install, an Optic diff): the OS cache folder of the user (`$XDG_CACHE_HOME`,
 * else `~/.cache`), `zone-api/<name>`, shared by every checkout of the repository on the machine.
 * `ZONE_API_TEST_CACHE=off` turns it off (undefined): every step then runs as on a fresh machine.
 */
export function testCacheDir(name: string): string | undefined {
  if (process.env.ZONE_API_TEST_CACHE === 'off') return undefined;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'zone-api', name);
}
