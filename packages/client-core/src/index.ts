export { textAnswer } from './answer.js';
export type { CallInit, ClientParts, CoreClientOptions } from './client.js';
export { createTypedClient, querySerializer } from './client.js';
export type { ZoneApiErrorKind } from './errors.js';
export { redact, ZoneApiError } from './errors.js';
export type { RetryOptions, TransportOptions } from './fetch.js';
export { createTransport, PlainRequest, parseRetryAfter } from './fetch.js';
export { DEFAULT_PAGE_SIZE, MAX_PAGES, type Pagination, paginate } from './paginate.js';
export { MAX_RESPONSE_BYTES } from './read.js';
export type {
  CallResult,
  ErrorAtStatus,
  ErrorMessage,
  ErrorStatus,
  InitOf,
  OperationInfo,
  OperationMethods,
  OperationTable,
  PagedOperationId,
  PageItem,
  Paginator,
  ResponseError,
  TypedClient,
} from './types.js';
export { errorAt } from './types.js';
