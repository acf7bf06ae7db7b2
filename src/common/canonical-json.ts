/**
 * JSON with object keys sorted (by UTF-16 code units) at every level, arrays in their order, so `{a,b}`
 * and `{b,a}` serialise alike: what request fingerprints hash (CONTRACT.md, "Idempotency"). Otherwise
 * `JSON.stringify`'s rules: `toJSON` applies, `undefined` members are left out.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );
}
