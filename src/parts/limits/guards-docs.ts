import type { Plan } from '../../plan/types.ts';
import { code, type DocBlock, heading, type Inline, paragraph, table } from '../docs-model.ts';
import { formatBytes, formatMs } from './docs.ts';

/** What a client gets past each limit: the status and the catalogue code. */
const answer = (status: number, errorCode: string): Inline => [`${status} `, code(errorCode)];

/** Sizes, time-outs and overload in words: every row is enforced, with the answer a client gets past it. */
export const guardBlocks = (plan: Plan): DocBlock[] => {
  const spec = plan.spec.limits;
  const { guards } = plan.limits;
  const mark = (given: unknown) => (given === undefined ? ' (default)' : '');
  const sizes: Inline[][] = [
    [
      'request body',
      `${formatBytes(plan.limits.bodyBytes)}${mark(spec?.size?.body)}`,
      answer(413, 'payload_too_large'),
    ],
    ...Object.entries(spec?.size?.endpoints ?? {}).map(([route, size]): Inline[] => [
      ['body of ', code(route)],
      size,
      answer(413, 'payload_too_large'),
    ]),
    [
      'page size',
      `${plan.limits.maxPageSize} records at most${mark(spec?.size?.pageSize)}`,
      answer(400, 'limit_exceeded'),
    ],
    ['JSON nesting depth', `${plan.limits.depth}${mark(spec?.size?.depth)}`, answer(400, 'too_deep')],
    ['items of any array in a body', `${guards.arrayItems}${mark(spec?.size?.items)}`, answer(400, 'too_many_items')],
    [
      'request target (path and query)',
      `${formatBytes(guards.urlBytes)}${mark(spec?.size?.url)}`,
      answer(414, 'uri_too_long'),
    ],
    [
      'request line and headers',
      `${formatBytes(guards.headerBytes)}${mark(spec?.size?.headers)}`,
      answer(431, 'request_header_fields_too_large'),
    ],
  ];
  const timeouts: Inline[][] = [
    [
      'handling a request',
      `${formatMs(plan.limits.requestTimeoutMs)}${mark(spec?.timeouts?.request)}`,
      answer(503, 'timeout'),
    ],
    ...Object.entries(spec?.timeouts?.endpoints ?? {}).map(([route, time]): Inline[] => [
      ['handling ', code(route)],
      time,
      answer(503, 'timeout'),
    ]),
    [
      'receiving the request line and headers',
      `${formatMs(guards.headersTimeoutMs)}${mark(spec?.timeouts?.headers)}`,
      answer(408, 'request_timeout'),
    ],
    [
      'receiving the whole request',
      `${formatMs(guards.receiveTimeoutMs)}${mark(spec?.timeouts?.body)}`,
      answer(408, 'request_timeout'),
    ],
  ];
  return [
    heading(3, 'Sizes'),
    paragraph(
      'Each size is enforced: a request over it is refused with the answer shown, and nothing of it is stored. A body over its limit is refused before it is read in full.',
    ),
    table(['Limit', 'Value', 'Past it'], sizes),
    heading(3, 'Time-outs'),
    paragraph(
      'A request past its time budget is answered at once; nothing it does from then on is kept (its transaction rolls back, no event is written). A client too slow to send its request is answered 408 and disconnected, within about a second of the time shown.',
    ),
    table(['Limit', 'Value', 'Past it'], timeouts),
    ...overloadBlocks(plan),
  ];
};

const overloadBlocks = (plan: Plan): DocBlock[] => {
  const overload = plan.limits.guards.overload;
  if (!overload) return [];
  const critical = plan.spec.limits?.overload?.critical ?? [];
  return [
    heading(3, 'Overload'),
    paragraph(
      `When the server's event loop lags more than ${formatMs(overload.lagMs)}, new requests are refused at once with 503 `,
      code('overloaded'),
      ` and Retry-After: ${overload.retryAfterS} instead of waiting in a queue. Still served: `,
      code('GET /healthz'),
      ', ',
      code('GET /readyz'),
      ...(critical.length > 0 ? [`; and, up to ${overload.reserve} requests at once, `] : []),
      ...critical.flatMap((route, i) => [i ? ', ' : '', code(route)]),
      '.',
    ),
  ];
};
