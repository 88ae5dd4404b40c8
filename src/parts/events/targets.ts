import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Addresses a webhook must never reach: loopback, private, link-local (cloud metadata), unspecified, CGNAT. */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** NAT64 (RFC 6052): 64:ff9b::a.b.c.d reaches the IPv4 address a.b.c.d, which is what must be checked. */
const NAT64 = new BlockList();
NAT64.addSubnet('64:ff9b::', 96, 'ipv6');

/** The last 32 bits of an IPv6 address, as dotted IPv4. */
const embeddedIpv4 = (address: string): string => {
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) return dotted[1] as string;
  const groups = address.split(':');
  const low = Number.parseInt(groups.at(-1) || '0', 16);
  const high = Number.parseInt(groups.at(-2) || '0', 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
};

/**
 * Not an IP address, or one of the blocked ones. IPv4-mapped forms (::ffff:7f00:1) are checked as IPv4 by
 * BlockList itself; NAT64 forms are checked on the IPv4 address they reach.
 */
export const isBlockedAddress = (address: string): boolean => {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6 && NAT64.check(address, 'ipv6')) return BLOCKED.check(embeddedIpv4(address), 'ipv4');
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
};

export type Resolve = (host: string) => Promise<string[]>;

/** Every address a name has, through a node-style resolver (the one deliveries connect through, so both agree). */
export const resolveWith =
  (lookup: LookupFunction): Resolve =>
  (host) =>
    new Promise((resolve, reject) =>
      lookup(host, { all: true }, (error, addresses) =>
        error ? reject(error) : resolve(Array.isArray(addresses) ? addresses.map((a) => a.address) : [addresses]),
      ),
    );

const resolveAll = resolveWith(dnsLookup);

/**
 * What can be told of a receiver URL without DNS: not an http(s) URL, credentials in it, or (unless private
 * targets are allowed) an address literal or a name that is loopback, private or link-local. Undefined: fine
 * so far. WHATWG URL parsing turns decimal, hex and octal IPv4 forms into dotted quads first.
 */
export const staticTargetProblem = (text: string, allowPrivate: boolean): string | undefined => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not carry credentials';
  if (allowPrivate) return undefined;
  // A trailing dot makes a name fully qualified, not another name: `localhost.` is `localhost`.
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && isBlockedAddress(host)))
    return 'points at a loopback, private or link-local address';
  return undefined;
};

/** Why a receiver URL is refused, or undefined when it may be used (checked again at connect time). */
export const targetProblem = async (
  text: string,
  allowPrivate: boolean,
  resolve: Resolve = resolveAll,
): Promise<string | undefined> => {
  const problem = staticTargetProblem(text, allowPrivate);
  if (problem || allowPrivate) return problem;
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return undefined;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return 'its host does not resolve';
  }
  return addresses.some(isBlockedAddress) ? 'points at a loopback, private or link-local address' : undefined;
};
