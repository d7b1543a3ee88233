// Placeholders such as <CUSTOMER> outside a code span are HTML tags to Markdown renderers: the docs
// would show "The account id ()". They must stand in backticks: `<CUSTOMER>`.
export default function noRawPlaceholder(text) {
  if (typeof text !== 'string') return [];
  const outside = text.split('`').filter((_, i) => i % 2 === 0);
  const raw = outside.flatMap((part) => part.match(/<[A-Za-z_][A-Za-z0-9_]*>/g) ?? []);
  return raw.length ? [{ message: `${raw.join(', ')} outside backticks renders as an HTML tag; write \`${raw[0]}\`` }] : [];
}
