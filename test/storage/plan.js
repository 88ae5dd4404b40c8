import { buildPlan } from "../../src/plan/build-plan.js";
import { checkSource } from "../../src/spec/check.js";
import { parseSpecText } from "../../src/spec/load.js";
/** The plan of an inline spec, without a server; a spec with errors fails the test loudly. */
export const planOfSpec = (yaml) => {
    const parsed = parseSpecText(yaml, 'contract.yaml');
    const checked = checkSource({ ...parsed, dir: '.' });
    if (!checked.spec)
        throw new Error(JSON.stringify(checked.diagnostics));
    return buildPlan(checked.spec);
};
//# sourceMappingURL=plan.js.map