/** Who is calling, as guards, rules, handlers and the history see it. */
export interface Principal {
  readonly subject: string;
  readonly roles: readonly string[];
  /** The scheme that authenticated the caller; '' for anonymous. */
  readonly scheme: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

/** The caller of a public route that sent no credential. */
export const ANONYMOUS: Principal = Object.freeze({ subject: '', roles: [], scheme: '', claims: {} });

/** The value CEL expressions see as `principal`. */
export const celPrincipal = (p: Principal | undefined) => {
  const principal = p ?? ANONYMOUS;
  return {
    subject: principal.subject,
    roles: [...principal.roles],
    scheme: principal.scheme,
    claims: principal.claims,
  };
};
