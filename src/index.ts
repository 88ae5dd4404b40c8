/** The one public door of Ninefold. Nothing from Fastify, the YAML library or a driver leaks through it. */
export { defineService } from './define-service.ts';
export type { Principal } from './parts/auth/principal.ts';
export type { CustomContext, CustomHandler } from './parts/endpoints/custom-runtime.ts';
export type {
  ApiRecord,
  RecordDoor,
  RecordDoors,
  RecordFilterOp,
  RecordPage,
  RecordQuery,
} from './parts/endpoints/record-door.ts';
export {
  createReplayGuard,
  type VerifyFailure,
  type VerifyOptions,
  verifyWebhook,
  WebhookVerificationError,
} from './parts/events/verify.ts';
export type { FieldSpec, FieldType } from './parts/resources/field-schema.ts';
export { checkFile } from './spec/check.ts';
export type { Diagnostic, DiagnosticCode } from './spec/diagnostic-codes.ts';
export type { ServiceSpec } from './spec/schema.ts';
