import { DataFile, readState, removeStaleTemps } from '../domain/persist.js';
import { validateSeed } from '../domain/seed-check.js';
import type { Store } from '../domain/state.js';
import type { StateData } from '../domain/types.js';
import type { ApiName, OpenApiDoc } from '../router/spec.js';
import { HttpError } from '../shared/errors.js';

// A sandbox's state kept in its data file (startSandbox({ dataFile })): what it starts from, and each
// change written before its answer, undone when the write fails. The file's format, journal and
// crash-safe writes are domain/persist.ts.

/** What a sandbox starts from: its data file's state when the file holds one (checked as a seed is), else the seed. */
export function startingState(seed: StateData, dataFile: string | undefined, specs: Record<ApiName, OpenApiDoc>): StateData {
  if (!dataFile) return seed;
  removeStaleTemps(dataFile);
  const saved = readState(dataFile);
  if (saved === undefined) return seed;
  validateSeed(saved, specs, `data file ${dataFile}`);
  return saved;
}

export interface Saving {
  /** The data file's writer; undefined for a sandbox in memory. */
  saver?: DataFile;
  /** Writes the changes made so far (nothing in memory); a failed write undoes them and throws a 503. */
  persist(): Promise<void>;
}

/**
 * The store saved to `dataFile`. A change is acknowledged once it is written. When the write fails,
 * memory goes back to what the disk holds (every change still waiting for that write is undone, then
 * `undone` runs) and the request gets a 503.
 */
export function savingTo(
  store: Store,
  dataFile: string | undefined,
  fsync: 'always' | 'interval' | undefined,
  undone: () => Promise<void>,
): Saving {
  if (!dataFile) return { persist: async () => {} };
  const saver = new DataFile(
    dataFile,
    {
      sectionsJson: (all) => store.sectionsJson(all),
      snapshot: () => `${store.toJson({ saved_at: new Date().toISOString() })}\n`,
    },
    { fsync },
  );
  const persist = async () => {
    try {
      await saver.save();
    } catch (err) {
      const acked = saver.acknowledged();
      if (acked) {
        store.load(acked as StateData);
        await undone();
      }
      const code = (err as NodeJS.ErrnoException).code;
      throw new HttpError(503, `The change could not be saved to the data file (${code ?? (err as Error).message}), so it was not made`, {
        headers: { 'Retry-After': '1' },
      });
    }
  };
  return { saver, persist };
}
