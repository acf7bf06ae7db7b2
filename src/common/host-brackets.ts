/**
 * `host` without the square brackets of an IPv6 literal as it stands in a URL or request target
 * (`[::1]` → `::1`, RFC 3986 section 3.2.2); a leading `[` and a trailing `]` are each removed when
 * present, anything else is returned as is (names, IPv4 literals, bare IPv6 literals).
 */
export function withoutBrackets(host: string): string {
  return host.replace(/^\[|\]$/g, '');
}
