import { describe, expect, it } from 'vitest';
import { createAnswerTurn } from './answer-turn.ts';

const nextTurn = () => new Promise<void>((done) => setImmediate(done));
const record = (into: string[]) => (name: string, status: number) => void into.push(`${name}:${status}`);

describe('answers written at the end of the turn', () => {
  it('holds the writes asked for in one turn and runs them in order once the turn ends', async () => {
    const written: string[] = [];
    const turn = createAnswerTurn(() => undefined);
    turn.later(record(written), 'a', 200);
    turn.later(record(written), 'b', 201);
    expect(written).toEqual([]);
    await nextTurn();
    expect(written).toEqual(['a:200', 'b:201']);
    // A later turn is a batch of its own.
    turn.later(record(written), 'c', 204);
    await nextTurn();
    expect(written).toEqual(['a:200', 'b:201', 'c:204']);
  });

  it('writes a full batch at once rather than holding an unbounded number of answers', () => {
    const written: string[] = [];
    const turn = createAnswerTurn(() => undefined);
    for (let i = 0; i < 64; i++) turn.later(record(written), `r${i}`, 200);
    expect(written).toHaveLength(64);
    expect(written[0]).toBe('r0:200');
    expect(written[63]).toBe('r63:200');
  });

  it('reports a write that throws and still writes the rest of the turn', async () => {
    const written: string[] = [];
    const failures: unknown[] = [];
    const turn = createAnswerTurn((error) => failures.push(error));
    turn.later(record(written), 'a', 200);
    turn.later(
      () => {
        throw new Error('socket gone');
      },
      undefined,
      undefined,
    );
    turn.later(record(written), 'c', 200);
    await nextTurn();
    expect(written).toEqual(['a:200', 'c:200']);
    expect(failures).toHaveLength(1);
    expect((failures[0] as Error).message).toBe('socket gone');
  });
});
