import { type CheckContext, isRecord } from '../../spec/check-context.ts';

/** Semantic checks of part: purpose. */
export const checkPurpose = (ctx: CheckContext): void => {
  const { service, resources } = ctx.spec;
  // A `service` without `name` is already a missing-property shape error; warn only when `service` is absent.
  if (service !== undefined || !isRecord(resources) || Object.keys(resources).length === 0) return;
  ctx.report('missing-service-name', ['resources'], 'resources are declared but the service has no name', 'key');
};
