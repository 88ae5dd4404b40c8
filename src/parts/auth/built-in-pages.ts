/** The pages every service serves on its own (its own file: the server reads it without the spec language's schema). */
export const BUILT_IN_PAGES = ['health', 'openapi', 'docs'] as const;
export type BuiltInPage = (typeof BUILT_IN_PAGES)[number];
