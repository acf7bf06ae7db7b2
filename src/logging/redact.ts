/**
 * Patterns of values that never reach a log line (docs/operations.md#health-metrics-logs): API key secrets (`sk_live_…`),
 * webhook signing secrets (`whsec_…`), the key in an MCP path (`/mcp/<API_KEY>`, which may be any
 * string a client sent) and the token of a dashboard set-password link (`/set-password/<token>`, live
 * for 24 h).
 */
const SECRET_PATTERNS: Array<[RegExp, string]> = [
  [/sk_live_[A-Za-z0-9]+/g, 'sk_live_[REDACTED]'],
  [/whsec_[A-Za-z0-9+/=_-]+/g, 'whsec_[REDACTED]'],
  [/\/mcp\/(?!\[REDACTED\]|:key\b)[^/?#\s"'\\]+/g, '/mcp/[REDACTED]'],
  [/\/set-password\/(?!\[REDACTED\]|:token\b)[^/?#\s"'\\]+/g, '/set-password/[REDACTED]'],
];

/** `text` with every secret of {@link SECRET_PATTERNS} replaced by its redacted form. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
