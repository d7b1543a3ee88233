// Generators in other languages turn components of several kinds into types of one namespace: a
// parameter `Zone` and a schema `Zone` become two `Zone` models (openapi-typescript-codegen writes both
// and its output does not compile). Examples and security schemes never become types, and examples
// are named after their schema on purpose (`<Schema>_<name>`), so they are left out.
const TYPED_KINDS = ['schemas', 'parameters', 'responses', 'requestBodies', 'headers', 'pathItems', 'callbacks', 'links'];

export default function uniqueComponentNames(components) {
  if (!components || typeof components !== 'object') return [];
  const kindsOf = new Map();
  for (const kind of TYPED_KINDS) {
    for (const name of Object.keys(components[kind] ?? {})) kindsOf.set(name, [...(kindsOf.get(name) ?? []), kind]);
  }
  const found = [];
  for (const [name, kinds] of kindsOf) {
    if (kinds.length < 2) continue;
    for (const kind of kinds.slice(1)) {
      found.push({
        message: `component name \`${name}\` is used by ${kinds.join(' and ')}: generators write one type per name; rename the ${kind.replace(/s$/, '')}`,
        path: ['components', kind, name],
      });
    }
  }
  return found;
}
