/** Where a request's credentials are read from; only the places a scheme declares are ever looked at. */
export interface CredentialSource {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly query: Readonly<Record<string, unknown>>;
}

const single = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;

/** A header's one value; `name` in lower case, as Node keys them. */
export const headerValue = (source: CredentialSource, name: string): string | undefined => single(source.headers[name]);

export const queryValue = (source: CredentialSource, name: string): string | undefined => single(source.query[name]);

/** One cookie by name (RFC 6265 pairs; the first one wins). */
export const cookieValue = (source: CredentialSource, name: string): string | undefined => {
  const header = headerValue(source, 'cookie');
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) {
      const raw = pair.slice(eq + 1).trim();
      try {
        return decodeURIComponent(raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw);
      } catch {
        return raw;
      }
    }
  }
  return undefined;
};

/**
 * The credentials part of `Authorization: <scheme> <credentials>` when the scheme word (lower case) matches,
 * whatever its case on the wire.
 */
export const authorization = (source: CredentialSource, scheme: string): string | undefined => {
  const header = headerValue(source, 'authorization');
  if (!header) return undefined;
  const space = header.indexOf(' ');
  if (space < 0) return header.toLowerCase() === scheme ? '' : undefined;
  return header.slice(0, space).toLowerCase() === scheme ? header.slice(space + 1).trim() : undefined;
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The user name of Basic credentials whose password is empty (`sk_test_…:`); undefined for anything else. */
export const basicUserOnly = (encoded: string): string | undefined => {
  if (encoded.length > 4096 || !BASE64.test(encoded)) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 && colon === decoded.length - 1 ? decoded.slice(0, colon) : undefined;
};
