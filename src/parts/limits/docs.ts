import type { Plan } from '../../plan/types.ts';
import type { Rate } from '../../spec/units.ts';
import {
  code,
  type DocBlock,
  type DocSection,
  heading,
  type Inline,
  notShownSection,
  paragraph,
  table,
} from '../docs-model.ts';
import { guardBlocks } from './guards-docs.ts';

export const LIMITS_HEADING = 'Limits';
const NOT_SHOWN = 'Rate limits, size limits, time-outs and quotas: not shown.';

const WINDOWS: Array<[number, string]> = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1000, 'second'],
];

/** { limit: 100, windowMs: 60000 } → "100 per minute"; 2 minutes → "100 per 2 minutes". */
export const formatRate = (rate: Rate): string => {
  for (const [ms, unit] of WINDOWS)
    if (rate.windowMs % ms === 0) {
      const n = rate.windowMs / ms;
      return `${rate.limit} per ${n === 1 ? unit : `${n} ${unit}s`}`;
    }
  return `${rate.limit} per ${rate.windowMs} ms`;
};

export const formatBytes = (bytes: number): string => {
  for (const [size, unit] of [
    [1024 ** 3, 'GiB'],
    [1024 ** 2, 'MiB'],
    [1024, 'KiB'],
  ] as const)
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  return `${bytes} bytes`;
};

export const formatMs = (ms: number): string =>
  ms % 60_000 === 0 ? `${ms / 60_000} min` : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;

const rateBlocks = (plan: Plan): DocBlock[] => {
  const rate = plan.limits.rate;
  const rows: Inline[][] = [];
  const per = rate?.by === 'ip' ? 'per client address' : 'per caller (its address when anonymous)';
  if (rate?.default) rows.push([['every route (policy ', code('default'), ')'], formatRate(rate.default), per]);
  for (const [role, r] of rate?.roles ?? [])
    rows.push([
      role === 'anonymous' ? 'callers without credentials' : ['callers with the role ', code(role)],
      formatRate(r),
      role === 'anonymous' ? 'per client address' : per,
    ]);
  for (const [endpoint, r] of rate?.endpoints ?? []) rows.push([code(endpoint), formatRate(r), per]);
  const authFailures = plan.spec.limits?.rate?.authFailures;
  if (authFailures) rows.push(['failed authentication', code(authFailures), 'per user name and per IP address']);
  if (!rows.length) return [];
  return [
    heading(3, 'Rate limits'),
    paragraph(
      'Rate limits are enforced: a request over one is answered 429 ',
      code('rate_limited'),
      ' with ',
      code('Retry-After'),
      ', before its body is read. Every answer of a limited route carries ',
      code('RateLimit-Policy'),
      ' and ',
      code('RateLimit'),
      ` (one item per policy). A role's rate replaces the default for its callers; a route's own rate applies on top. ${
        plan.limits.store
          ? 'Counters are shared by every instance through Redis.'
          : 'Counters are kept in each process unless the server is given Redis (NINEFOLD_REDIS_URL), which shares them across instances.'
      }`,
    ),
    table(['Applies to', 'Limit', 'Counted'], rows),
  ];
};

const quotaBlocks = (plan: Plan): DocBlock[] => {
  const rows = [...plan.limits.quotas].map(([key, r]): Inline[] => [code(key), formatRate(r)]);
  return rows.length
    ? [
        heading(3, 'Quotas'),
        paragraph(
          'Quotas are enforced: successful calls per caller per calendar period (UTC), kept in the database. A caller with none left is answered 429 ',
          code('quota_exceeded'),
          ' until the period ends; ',
          code('GET /_ninefold/usage'),
          ' shows the caller its own usage.',
        ),
        table(['Operation', 'Quota'], rows),
      ]
    : [];
};

/** Part 8: rate limits, quotas, sizes and time-outs; defaults are marked as such, and whether each is enforced yet. */
export const limitsDocs = (plan: Plan): DocSection => {
  const spec = plan.spec.limits;
  const hasInterface = plan.resources.length > 0 || plan.custom.length > 0;
  if (!spec && !hasInterface) return notShownSection('limits', LIMITS_HEADING, NOT_SHOWN);
  return {
    part: 'limits',
    heading: LIMITS_HEADING,
    shown: true,
    blocks: [...rateBlocks(plan), ...quotaBlocks(plan), ...guardBlocks(plan)],
  };
};
