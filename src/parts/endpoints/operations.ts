/** The operations a resource's endpoints may offer (its own file: the server reads it without the spec language's schema). */
export const OPERATIONS = ['list', 'get', 'create', 'update', 'replace', 'delete'] as const;
