/**
 * Host-name patterns of allow lists (CONTRACT.md, "Render links", `allowedHosts`; "Browser profiles",
 * `allowedDomains`): an exact lower-case name, or one leading `*.` for any subdomain of a name but not
 * the name itself.
 */

/** A host pattern: a lower-case DNS name (or IPv4 literal), optionally with one leading `*.` (any subdomain). */
export const HOST_PATTERN = /^(\*\.)?(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Whether `host` (any case, no port, a trailing dot ignored) matches one of `patterns`: an exact name,
 * or `*.example.com` for any subdomain of example.com but not the apex. An empty list allows every host.
 */
export function hostAllowed(host: string, patterns: readonly string[]): boolean {
  if (!patterns.length) return true;
  const name = host.toLowerCase().replace(/\.$/, '');
  return patterns.some((pattern) =>
    pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1 : name === pattern,
  );
}
