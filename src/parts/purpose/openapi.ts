import type { Plan } from '../../plan/types.ts';
import type { OpenApiObject } from '../openapi-model.ts';

/** The info object: title, purpose and behaviour as the description, contact, and the newest API version. */
export const purposeInfo = (plan: Plan): OpenApiObject => {
  const { service, spec } = plan;
  const description = [service.purpose, service.behaviour].filter(Boolean).join('\n\n');
  const contact = spec.service?.contact;
  const versions = spec.versioning?.versions ?? [];
  return {
    title: service.title,
    ...(description ? { description } : {}),
    ...(contact && Object.keys(contact).length ? { contact: { ...contact } } : {}),
    version: versions.at(-1)?.id ?? '1.0.0',
  };
};
