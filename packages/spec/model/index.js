// @ts-check
// The operation model: the one place that loads a bundle, follows its `$ref`s and lists its
// operations with what every consumer needs (merged parameters, request and response schemas,
// security, the `x-` behaviour facts), and compiles JSON Schema validators against it.
// The sandbox's router, the test kit, the fuzzer and the build scripts all read the bundles
// through this module. Plain JavaScript with JSDoc types, so that the build scripts run it before
// anything is compiled; `tsc` emits its declarations for the TypeScript packages.
// Split by concern: bundles.js (where the bundles are, reading one), refs.js (pointers, `$ref`s),
// operations.js (the operations and their facts), validators.js (Ajv), security.js (the credentials'
// facts), limits.js (the stated rate limits), conformance.js (an answer held to its bundle).
export * from './bundles.js';
export * from './conformance.js';
export * from './limits.js';
export * from './operations.js';
export * from './refs.js';
export * from './security.js';
export * from './validators.js';
