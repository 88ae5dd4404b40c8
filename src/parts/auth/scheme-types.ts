import type { Static } from '@sinclair/typebox';
import type { SchemeSchema } from './schema.ts';

export type SchemeSpec = Static<typeof SchemeSchema>;
