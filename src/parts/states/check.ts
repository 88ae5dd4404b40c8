import { celProblem } from '../../spec/cel-problem.ts';
import { type CheckContext, isRecord, stringList } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { parseDuration } from '../../spec/units.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { checkCelNames, fieldsShape, recordShape } from '../resources/check-cel.ts';
import { checkFields } from '../resources/check-field.ts';
import { fieldMap, machineOf, type Raw, resourceMap, stateFieldOf, transitionMap } from '../resources/lookup.ts';
import { checkGraph } from './check-graph.ts';
import { type MachineNames, machineNames } from './machine-names.ts';

/** Semantic checks of part: states (each resource's `states`). */
export const checkStates = (ctx: CheckContext): void => {
  const resources = resourceMap(ctx.spec);
  const scope = { ctx, resources: [...resources.keys()] };
  for (const [resource, spec] of resources) {
    const machine = machineOf(spec);
    if (!machine) continue;
    const base: PathSegment[] = ['resources', resource, 'states'];
    const names = machineNames(machine, base);
    checkInitial(ctx, machine, names, base);
    checkNamedStates(ctx, names);
    checkEditable(ctx, spec, machine, names, base);
    checkStateField(ctx, spec, resource, names);
    const record = recordShape(resource, spec);
    for (const [name, t] of transitionMap(spec)) {
      const at = [...base, 'transitions', name];
      if (typeof t.when === 'string') {
        const problem = celProblem(t.when);
        if (problem) ctx.report('invalid-guard', [...at, 'when'], `the guard is not valid CEL: ${problem}`);
        const input = fieldsShape(t.input, `the input of ${name}`);
        checkCelNames(ctx, t.when, [...at, 'when'], 'the guard', { record, input });
      }
      if (t.after !== undefined && parseDuration(t.after) === undefined)
        ctx.report('invalid-duration', [...at, 'after'], `"${String(t.after)}" is not a duration like 24h or PT24H`);
      checkFields(scope, t.input, [...at, 'input'], false);
    }
    if (typeof machine.initial === 'string' && names.known(machine.initial)) checkGraph(ctx, machine, names, base);
  }
};

const checkInitial = (ctx: CheckContext, machine: Raw, names: MachineNames, base: PathSegment[]) => {
  // An absent `initial` is already a missing-property shape error; only a blank one is reported here.
  if (typeof machine.initial !== 'string') return;
  if (machine.initial.trim() === '')
    ctx.report('missing-initial-state', [...base, 'initial'], 'the initial state is blank');
  else if (!names.known(machine.initial))
    ctx.report(
      'unknown-initial-state',
      [...base, 'initial'],
      `"${machine.initial}" is not one of the states${suggestion(machine.initial, names.all)}`,
    );
};

/** Transition ends and final states must be declared when `states` lists them explicitly. */
const checkNamedStates = (ctx: CheckContext, names: MachineNames) => {
  for (const { name, path } of names.mentions) {
    if (!names.known(name)) ctx.report('unknown-state', path, `no state "${name}"${suggestion(name, names.all)}`);
  }
};

const checkEditable = (ctx: CheckContext, resource: Raw, machine: Raw, names: MachineNames, base: PathSegment[]) => {
  const fields = [...fieldMap(resource).keys()];
  const checkList = (list: unknown, path: PathSegment[]) => {
    if (!Array.isArray(list)) return;
    for (const [i, field] of list.entries()) {
      if (typeof field === 'string' && !fields.includes(field))
        ctx.report('unknown-field', [...path, i], `no field "${field}"${suggestion(field, fields)}`);
    }
  };
  if (isRecord(machine.editable)) {
    for (const [state, list] of Object.entries(machine.editable)) {
      if (!names.known(state))
        ctx.report(
          'unknown-state',
          [...base, 'editable', state],
          `no state "${state}"${suggestion(state, names.all)}`,
          'key',
        );
      checkList(list, [...base, 'editable', state]);
    }
  }
  if (isRecord(machine.states)) {
    for (const [state, meta] of Object.entries(machine.states)) {
      if (isRecord(meta)) checkList(meta.editable, [...base, 'states', state, 'editable']);
    }
  }
};

const checkStateField = (ctx: CheckContext, resource: Raw, name: string, names: MachineNames) => {
  const stateField = stateFieldOf(resource) ?? 'status';
  const field = fieldMap(resource).get(stateField);
  if (!field) return;
  const path = ['resources', name, 'fields', stateField, 'type'];
  if (field.type !== 'enum' && field.type !== 'string') {
    ctx.report('state-field-clash', path, `"${stateField}" holds the state, so it must be an enum or a string`);
    return;
  }
  const values = stringList(field.values);
  const missing = field.type === 'enum' ? names.all.filter((s) => !values.includes(s)) : [];
  if (missing.length > 0)
    ctx.report('state-field-clash', path, `the enum "${stateField}" lacks the states ${missing.join(', ')}`);
};
