/**
 * The token of an `Authorization: Bearer <token>` header value (spec section 5): the scheme is matched
 * case-insensitively, spaces or tabs separate it from the token and may follow it. Returns null when
 * the header is missing or has another form (another scheme, no token, two words).
 */
export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match ? match[1] : null;
}
