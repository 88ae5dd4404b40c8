import type { Plan } from '../../plan/types.ts';
import { code, type DocBlock, type DocSection, notShownSection, paragraph, type Span } from '../docs-model.ts';

export const PURPOSE_HEADING = 'What the service does';
const NOT_SHOWN = 'Purpose and behaviour of the service: not shown.';

/** Part 1: the service's name, purpose and behaviour, in the spec's own prose. */
export const purposeDocs = (plan: Plan): DocSection => {
  const service = plan.spec.service;
  if (!service)
    return notShownSection(
      'purpose',
      PURPOSE_HEADING,
      `${NOT_SHOWN} No single service is identified, so no function can be stated.`,
    );
  const named: Span[] = ['The service ', code(service.name)];
  if (service.title && service.title !== service.name) named.push(` (${service.title})`);
  const blocks: DocBlock[] = [paragraph(...named, '.')];
  if (service.purpose) blocks.push(paragraph(service.purpose));
  if (service.behaviour) blocks.push(paragraph(service.behaviour));
  if (!service.purpose && !service.behaviour) blocks.push(paragraph(NOT_SHOWN));
  const contact = service.contact;
  if (contact && (contact.name || contact.email || contact.url)) {
    const parts = [contact.name, contact.email, contact.url].filter((x): x is string => Boolean(x));
    blocks.push(paragraph('Contact: ', parts.join(', '), '.'));
  }
  return { part: 'purpose', heading: PURPOSE_HEADING, shown: true, blocks };
};
