import type { Plan, ResourcePlan, StateMachinePlan } from '../../plan/types.ts';
import {
  code,
  codes,
  type DocBlock,
  type DocSection,
  heading,
  notShownSection,
  paragraph,
  type Span,
  table,
} from '../docs-model.ts';
import { fieldSummary } from '../resources/field-docs.ts';

export const STATES_HEADING = 'States and transitions';
const NOT_SHOWN = 'States and transitions: not shown.';

/** Mermaid state ids must be plain identifiers; state names nearly always are already. */
const stateId = (name: string): string => name.replace(/[^A-Za-z0-9_]/g, '_');

/** The machine as a Mermaid stateDiagram-v2: initial arrow, one edge per transition and from-state, final arrows. */
export const stateDiagram = (machine: StateMachinePlan): string => {
  const lines = ['stateDiagram-v2', `  [*] --> ${stateId(machine.initial)}`];
  for (const t of machine.transitions)
    for (const from of t.from)
      lines.push(`  ${stateId(from)} --> ${stateId(t.to)}: ${t.name}${t.after ? ` (after ${t.after})` : ''}`);
  for (const s of machine.states) if (s.final) lines.push(`  ${stateId(s.name)} --> [*]`);
  return lines.join('\n');
};

const machineBlocks = (resource: ResourcePlan, machine: StateMachinePlan): DocBlock[] => {
  const finals = machine.states.filter((s) => s.final).map((s) => s.name);
  const intro: Span[] = [
    'State field ',
    code(machine.field),
    ', initial state ',
    code(machine.initial),
    finals.length ? '; final states ' : '.',
    ...(finals.length ? [...codes(finals), '.'] : []),
    ' Each transition is an endpoint; the change is a compare-and-set, so two racing calls cannot both win.',
  ];
  return [
    heading(3, resource.name),
    paragraph(...intro),
    { kind: 'mermaid', source: stateDiagram(machine) },
    table(
      ['State', 'Final', 'Editable fields', 'Description'],
      machine.states.map((s) => [
        code(s.name),
        s.final ? 'yes' : 'no',
        s.editable ? codes(s.editable) : '',
        s.description ?? '',
      ]),
    ),
    table(
      ['Transition', 'From', 'To', 'Guard', 'Input', 'Roles', 'After', 'Event'],
      machine.transitions.map((t) => [
        t.description ? [code(t.name), ` — ${t.description}`] : code(t.name),
        codes(t.from),
        code(t.to),
        t.when ? code(t.when) : '',
        fieldSummary(t.input),
        t.roles.length ? codes(t.roles) : 'any role',
        t.after ?? '',
        code(t.event),
      ]),
    ),
  ];
};

/** Part 3: per resource with a state machine, a diagram, its states and its transition table. */
export const statesDocs = (plan: Plan): DocSection => {
  const machines = plan.resources.flatMap((r) => (r.states ? [[r, r.states] as const] : []));
  if (!machines.length) return notShownSection('states', STATES_HEADING, NOT_SHOWN);
  return {
    part: 'states',
    heading: STATES_HEADING,
    shown: true,
    blocks: machines.flatMap(([r, m]) => machineBlocks(r, m)),
  };
};
