import { authDocs } from '../parts/auth/docs.ts';
import type { DocSection, PartId } from '../parts/docs-model.ts';
import { endpointsDocs } from '../parts/endpoints/docs.ts';
import { errorsDocs } from '../parts/errors/docs.ts';
import { eventsDocs } from '../parts/events/docs.ts';
import { limitsDocs } from '../parts/limits/docs.ts';
import { purposeDocs } from '../parts/purpose/docs.ts';
import { resourcesDocs } from '../parts/resources/docs.ts';
import { statesDocs } from '../parts/states/docs.ts';
import { versioningDocs } from '../parts/versioning/docs.ts';
import type { Plan } from '../plan/types.ts';

/** The nine parts in the seed document's order, each with the name the opening paragraph uses. */
const PARTS: ReadonlyArray<{ readonly name: string; readonly docs: (plan: Plan) => DocSection }> = [
  { name: 'purpose', docs: purposeDocs },
  { name: 'resources', docs: resourcesDocs },
  { name: 'states', docs: statesDocs },
  { name: 'endpoints', docs: endpointsDocs },
  { name: 'authentication', docs: authDocs },
  { name: 'events', docs: eventsDocs },
  { name: 'errors', docs: errorsDocs },
  { name: 'limits', docs: limitsDocs },
  { name: 'versioning', docs: versioningDocs },
];

const SEED_TITLE = 'Service Interface Specification';

/** The whole document, before rendering: a title, an opening paragraph, and the nine sections in order. */
export interface DocDocument {
  readonly title: string;
  readonly intro: string;
  readonly sections: readonly DocSection[];
}

/** a, b and c */
const sentenceList = (items: readonly string[]): string =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * The seed's opening paragraph. Its second sentence says the interface is left open; it is kept word for word
 * when every part is open, and otherwise names the open parts (or says none is).
 */
const introFor = (sections: readonly DocSection[]): string => {
  const names = new Map<PartId, string>(sections.map((s, i) => [s.part, PARTS[i]?.name ?? s.part]));
  const open = sections.filter((s) => !s.shown).map((s) => names.get(s.part) ?? s.part);
  const first = `This document covers all nine parts of the specification: ${sentenceList(PARTS.map((p) => p.name))}. It is the only document.`;
  if (open.length === sections.length)
    return `${first} For every part, the interface is left open, and each part below says so.`;
  if (!open.length) return `${first} The specification defines every part.`;
  return `${first} The specification defines ${sections.length - open.length} of them; for ${sentenceList(open)} the interface is left open, and each of those parts says so.`;
};

/**
 * Title rule: a spec naming its service is "<title> — Service Interface Specification" (the title falls back
 * to the service name); a spec that defines nothing at all is the seed's "(no interface defined)".
 */
const titleFor = (plan: Plan, sections: readonly DocSection[]): string => {
  if (plan.spec.service) return `${plan.service.title} — ${SEED_TITLE}`;
  return sections.some((s) => s.shown) ? SEED_TITLE : `${SEED_TITLE} (no interface defined)`;
};

/** Builds the nine sections from the plan, in the seed's order. */
export const buildDocument = (plan: Plan): DocDocument => {
  const sections = PARTS.map((p) => p.docs(plan));
  return { title: titleFor(plan, sections), intro: introFor(sections), sections };
};
