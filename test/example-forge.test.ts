import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../src/emit/openapi.ts';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkFile } from '../src/spec/check.ts';
import { type PrismProxy, startPrismProxy } from './helpers/prism-proxy.ts';
import { freshDatabase, type Served, servePlan } from './helpers/serve-spec.ts';

// examples/forge, GitHub's conventions from the spec alone, walked over HTTP through Prism in proxy mode: every
// request and answer is checked against the OpenAPI document the server publishes, and must show no violation.
describe('examples/forge in GitHub’s conventions', () => {
  const work = mkdtempSync(join(tmpdir(), 'ninefold-forge-'));
  let served: Served;
  let prism: PrismProxy;
  const token: Record<string, string> = {};
  const as = (who: string) => ({ authorization: `Bearer ${token[who]}` });

  beforeAll(async () => {
    const { spec, dir } = await checkFile('examples/forge/service.yaml');
    if (!spec) throw new Error('examples/forge does not pass its checks');
    const plan = buildPlan(spec, dir);
    served = await servePlan(plan, { dbPath: freshDatabase() });
    token.admin = (await issueApiKey(served.store, { subject: 'admin', roles: ['admin'], prefix: 'ghp_' })).key;
    prism = await startPrismProxy(buildOpenApi(plan), served.url, work);
  });
  afterAll(async () => {
    await prism?.close();
    await served?.close({ remove: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('walks accounts, repositories, issues and stars, with no violation of its document', async () => {
    const call = prism.call;
    for (const login of ['Octocat', 'hubot']) {
      const user = (await call('POST', '/admin/users', 201, { body: { login }, headers: as('admin') })).json as {
        id: number;
      };
      expect(typeof user.id).toBe('number');
      token[login.toLowerCase()] = (
        await issueApiKey(served.store, { subject: String(user.id), roles: ['user'], prefix: 'ghp_' })
      ).key;
    }
    expect((await call('GET', '/user', 200, { headers: as('octocat') })).json).toMatchObject({ login: 'octocat' });
    await call('GET', '/users/hubot', 200, { headers: as('octocat') });

    // A repository, addressed by its owner's login and its name; its owner embedded as a simple user.
    const repo = await call('POST', '/user/repos', 201, {
      body: { name: 'hello-world', description: 'My first repository' },
      headers: as('octocat'),
    });
    expect(repo.json).toMatchObject({
      name: 'hello-world',
      owner: { login: 'octocat' },
      stargazers_count: 0,
      open_issues_count: 0,
    });
    const taken = await call('POST', '/user/repos', 422, { body: { name: 'hello-world' }, headers: as('octocat') });
    expect(taken.json).toMatchObject({
      message: expect.any(String),
      // The key is (owner, name): each field of it is named, as GitHub's errors[] does per field.
      errors: [
        { resource: 'Repo', code: 'already_exists', field: 'owner' },
        { resource: 'Repo', code: 'already_exists', field: 'name' },
      ],
    });
    await call('PATCH', '/repos/octocat/hello-world', 403, { body: { description: 'mine now' }, headers: as('hubot') });

    // Issues numbered per repository, their author embedded; closing one lowers the open count.
    const issue = await call('POST', '/repos/octocat/hello-world/issues', 201, {
      body: { title: 'Found a bug' },
      headers: as('hubot'),
    });
    expect(issue.json).toMatchObject({ number: 1, state: 'open', user: { login: 'hubot' } });
    await call('POST', '/repos/octocat/hello-world/issues', 201, { body: { title: 'Another' }, headers: as('hubot') });
    await call('GET', '/repos/octocat/hello-world/issues/2', 200, { headers: as('octocat') });
    await call('PATCH', '/repos/octocat/hello-world/issues/1', 200, {
      body: { state: 'closed' },
      headers: as('hubot'),
    });
    const open = await call('GET', '/repos/octocat/hello-world/issues?state=open', 200, { headers: as('octocat') });
    expect(open.json).toEqual([expect.objectContaining({ number: 2 })]);

    // Stars: PUT and DELETE /user/starred/{owner}/{repo} answer 204, and the count follows.
    await call('PUT', '/user/starred/octocat/hello-world', 204, { headers: as('hubot') });
    await call('PUT', '/user/starred/octocat/hello-world', 204, { headers: as('hubot') });
    await call('PUT', '/user/starred/octocat/hello-world', 204, { headers: as('octocat') });
    const counted = await call('GET', '/repos/octocat/hello-world', 200, { headers: as('hubot') });
    expect(counted.json).toMatchObject({ stargazers_count: 2, open_issues_count: 1 });
    await call('DELETE', '/user/starred/octocat/hello-world', 204, { headers: as('octocat') });
    await call('DELETE', '/user/starred/octocat/hello-world', 404, { headers: as('octocat') });

    // page/per_page with RFC 8288 Link headers, answers as bare arrays.
    await call('POST', '/user/repos', 201, { body: { name: 'second' }, headers: as('octocat') });
    const page = await call('GET', '/repositories?per_page=1&page=1', 200, { headers: as('hubot') });
    expect(page.json).toHaveLength(1);
    expect(page.res.headers.get('link')).toContain('</repositories?page=2&per_page=1>; rel="next"');

    const missing = await call('GET', '/repos/octocat/nope', 404, { headers: as('hubot') });
    expect(missing.json).toMatchObject({ message: expect.any(String) });
    // Prism refuses a request without credentials itself: this one goes to the server.
    const anonymous = await fetch(`${served.url}/user`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ message: expect.any(String) });
    await call('DELETE', '/repos/octocat/second', 204, { headers: as('octocat') });

    expect(prism.log()).not.toMatch(/✖|violation/i);
  });
});
