// Body schemas must be $refs to named components: generators in other languages turn inline object
// schemas into names like InlineObject12. Runs unresolved, so it sees the $refs of the bundle.
function isInlineObject(schema) {
  if (!schema || typeof schema !== 'object' || '$ref' in schema) return false;
  const types = [].concat(schema.type ?? []);
  if (types.includes('object') || schema.properties || schema.additionalProperties) return true;
  if (schema.items) return isInlineObject(schema.items);
  return ['allOf', 'oneOf', 'anyOf'].some((k) => Array.isArray(schema[k]) && schema[k].some(isInlineObject));
}

export default function noInlineObjectSchema(schema) {
  return isInlineObject(schema) ? [{ message: 'Body schema is an inline object: move it to components/schemas and $ref it' }] : [];
}
