import type { Static } from '@sinclair/typebox';
import type { AddressedRequest } from '../limits/trusted-proxies.ts';
import type { CredentialSource } from './credentials.ts';
import type { Principal } from './principal.ts';
import type { SchemeSchema } from './schema.ts';

export type SchemeSpec = Static<typeof SchemeSchema>;

/** A request's view for verifying (AuthRequest in authenticate.ts). */
export interface VerifyRequest extends CredentialSource, AddressedRequest {}

/** One scheme compiled for the authenticator. */
export interface CompiledScheme {
  readonly name: string;
  /** Where the credential sits: schemes that share a place share one credential. */
  readonly place: string;
  readonly challenge: string;
  readonly fromCookie: boolean;
  /** The credential, read only from the place the spec declares; undefined when absent. */
  readonly read: (source: CredentialSource) => string | undefined;
  readonly verify: (credential: string, request: VerifyRequest) => Promise<Principal>;
  /** The principal of a credential verified before and still good, without any I/O; undefined otherwise. */
  readonly known?: (credential: string) => Principal | undefined;
}
