import { ZoneApiError } from './errors.js';

/** How an operation's results are paged: its `x-pagination` in the spec, generated into the operation table. */
export type Pagination =
  | { readonly style: 'page'; readonly page: string; readonly size: string }
  | { readonly style: 'offset'; readonly offset: string; readonly limit: string; readonly items?: string; readonly total?: string };

/** The value at a JSON pointer such as `/log/entries` (the whole value for none). */
export type AtPointer<T, P> = P extends `/${infer Head}/${infer Rest}`
  ? AtPointer<NonNullable<T>[Head & keyof NonNullable<T>], `/${Rest}`>
  : P extends `/${infer Head}`
    ? NonNullable<T>[Head & keyof NonNullable<T>]
    : T;

/** The page size a walk asks for when the caller names none. */
export const DEFAULT_PAGE_SIZE = 100;
/** A walk stops after this many pages even if the server keeps answering full ones. */
export const MAX_PAGES = 100_000;

function at(value: unknown, pointer: string | undefined): unknown {
  if (!pointer) return value;
  let v = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  }
  return v;
}

type Call = (init: Record<string, unknown>) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/**
 * Calls a paged operation page after page and yields each record. Starts where the caller's query
 * starts (`page`/`offset`, else 0) with the caller's page size (else {@link DEFAULT_PAGE_SIZE}), and
 * stops on an empty or short page, or when the offset reaches the response's total. A page that
 * answers an error status throws a `ZoneApiError` (kind `http`) naming the status.
 */
export async function* paginate<Item>(
  call: Call,
  pagination: Pagination,
  init: Record<string, unknown> | undefined,
  method: string,
  path: string,
): AsyncGenerator<Item, void, undefined> {
  const params = (init?.params ?? {}) as Record<string, unknown>;
  const query = { ...((params.query ?? {}) as Record<string, unknown>) };
  const [posKey, sizeKey] = pagination.style === 'page' ? [pagination.page, pagination.size] : [pagination.offset, pagination.limit];
  const size = Number(query[sizeKey] ?? DEFAULT_PAGE_SIZE);
  let position = Number(query[posKey] ?? 0);
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const { data, error, response } = await call({
      ...init,
      params: { ...params, query: { ...query, [posKey]: position, [sizeKey]: size } },
    });
    if (error !== undefined || !response.ok) {
      throw new ZoneApiError(`${method} ${path} answered ${response.status} on page ${position}`, 'http', method, path, 1, response.status);
    }
    const items = at(data, pagination.style === 'offset' ? pagination.items : undefined);
    if (!Array.isArray(items))
      throw new ZoneApiError(`${method} ${path} answered a page without a list`, 'http', method, path, 1, response.status);
    for (const item of items) yield item as Item;
    if (items.length === 0 || items.length < size) return;
    if (pagination.style === 'page') position += 1;
    else {
      position += items.length;
      const total = at(data, pagination.total);
      if (typeof total === 'number' && position >= total) return;
    }
  }
}
