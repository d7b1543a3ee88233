export { createTypedClient, querySerializer } from './client.js';
export type { CoreClientOptions, OperationMethods, OperationTable, TypedClient } from './client.js';
export { redact, ZoneApiError } from './errors.js';
export type { ZoneApiErrorKind } from './errors.js';
export { createTransport, parseRetryAfter } from './fetch.js';
export type { RetryOptions, TransportOptions } from './fetch.js';
export { headerAuth, textBodies } from './middleware.js';
