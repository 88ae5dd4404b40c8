import { BlockList, isIP } from 'node:net';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

interface ProxyEntry {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** `10.0.0.0/8`, `192.0.2.7`, `2001:db8::/32` → the network; undefined when the text is neither. */
export const parseProxy = (text: string): ProxyEntry | undefined => {
  const [address = '', bits, extra] = text.trim().split('/');
  const version = isIP(address);
  if (!version || extra !== undefined) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!/^\d{1,3}$/.test(bits ?? String(max)) || prefix > max) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
};

/** An IPv4 address the socket reports in IPv6 form (::ffff:192.0.2.1) is the IPv4 address. */
const plain = (address: string): string => (address.startsWith('::ffff:') ? address.slice(7) : address);

/** `for=` values of Forwarded (RFC 7239), without quotes, brackets or ports; hidden (`unknown`, `_x`) ones as given. */
const forwardedFor = (value: string): string[] =>
  [...value.matchAll(/(?:^|[;,\s])for\s*=\s*("[^"]*"|[^;,\s]*)/gi)].map((m) => {
    const token = (m[1] ?? '').replace(/^"|"$/g, '');
    const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(token);
    if (bracketed) return bracketed[1] ?? '';
    return /^[\d.]+:\d+$/.test(token) ? (token.split(':')[0] ?? '') : token;
  });

const headerText = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(', ') : value;

/** The addresses a request passed through, client first, as the proxies wrote them (X-Forwarded-For, else Forwarded). */
const forwardedChain = (headers: Headers): string[] => {
  const xff = headerText(headers['x-forwarded-for']);
  if (xff !== undefined) return xff.split(',').map((a) => a.trim());
  const forwarded = headerText(headers.forwarded);
  return forwarded === undefined ? [] : forwardedFor(forwarded);
};

/**
 * The client's address from the socket's, believing X-Forwarded-For / Forwarded only when the socket is a trusted
 * proxy: the chain is read from the right, past every trusted proxy, and the first address no trusted proxy holds is
 * the client (a client can write anything at the left of the chain; only what trusted proxies appended counts).
 * Without trusted proxies the headers are ignored, so no client picks the key it is counted under.
 */
export const clientAddress = (trustProxy: readonly string[]): ((socket: string, headers: Headers) => string) => {
  const entries = trustProxy.map(parseProxy).filter((e): e is ProxyEntry => e !== undefined);
  if (entries.length === 0) return (socket) => plain(socket);
  const list = new BlockList();
  for (const e of entries) list.addSubnet(e.address, e.prefix, e.family);
  const trusted = (address: string) => {
    const version = isIP(address);
    return version !== 0 && list.check(address, version === 4 ? 'ipv4' : 'ipv6');
  };
  return (socket, headers) => {
    const from = plain(socket);
    if (!trusted(from)) return from;
    const chain = forwardedChain(headers).map(plain);
    for (let i = chain.length - 1; i >= 0; i--) {
      const address = chain[i] ?? '';
      if (trusted(address)) continue;
      return isIP(address) ? address : from;
    }
    return chain.length ? (chain[0] ?? from) : from;
  };
};

/** The peer address of each open connection, read once: Node's `remoteAddress` getter costs ~500 instructions a call. */
const peers = new WeakMap<object, string>();

/** The address of the socket a request came on (before trusted proxies); undefined once the socket is closed. */
export const peerAddress = (socket: { readonly remoteAddress?: string | undefined }): string | undefined => {
  let address = peers.get(socket);
  if (address === undefined) {
    address = socket.remoteAddress;
    if (address !== undefined) peers.set(socket, address);
  }
  return address;
};

/** A request as far as its client address goes: the connection it came on and its forwarding headers. */
export interface AddressedRequest {
  readonly socket: { readonly remoteAddress?: string | undefined };
  readonly headers: Headers;
}

/**
 * The client address of a request, the one every per-address limit keys on (the rate limits, the failed-login
 * limiter, the stream's connection cap, sign-in): the connection's peer, or behind a trusted proxy the client it
 * names (`clientAddress`).
 */
export const requestAddress = (trustProxy: readonly string[]): ((request: AddressedRequest) => string) => {
  const of = clientAddress(trustProxy);
  return (request) => of(peerAddress(request.socket) ?? '', request.headers);
};
