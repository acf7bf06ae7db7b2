/** A column's value as the API shows it: a `Date` as its ISO 8601 UTC text (null stays null), anything else as it is. */
export type PublicValue<V> = V extends Date ? string : V;

/** The columns `K` of entity `E` as the API shows them ({@link PublicValue}). */
export type PublicColumns<E, K extends keyof E> = { [P in K]: PublicValue<E[P]> };

/**
 * The columns `keys` of `row`, in that order, as the API shows them: every `Date` as
 * `toISOString()` (docs/SPEC.md: timestamps are ISO 8601 UTC with milliseconds), every other
 * value (null included) copied as it is. The public objects built from one row each (profiles,
 * storage destinations, render keys, webhook endpoints and deliveries) are these columns and
 * nothing computed; the type checker fails a list that misses a field of its DTO.
 */
export function publicColumns<E extends object, K extends keyof E>(row: E, keys: readonly K[]): PublicColumns<E, K> {
  const view: Partial<Record<K, unknown>> = {};
  for (const key of keys) {
    const value = row[key];
    view[key] = value instanceof Date ? value.toISOString() : value;
  }
  return view as PublicColumns<E, K>;
}
