// Every media type that has a schema must carry named `examples` (not a lone `example`), so that
// Prism can serve each with `Prefer: example=NAME` and a test can validate each against its schema.
export default function namedExamples(mediaType) {
  if (!mediaType || typeof mediaType !== 'object' || !mediaType.schema) return [];
  const ex = mediaType.examples;
  if (!ex || typeof ex !== 'object' || Object.keys(ex).length === 0) {
    return [{ message: 'A body with a schema needs at least one named example under `examples`' }];
  }
  return [];
}
