import { Observable, Subject, lastValueFrom, of, take, throwError, toArray } from 'rxjs';
import { endWith, streamIncompleteError } from './stream-end';

describe('endWith', () => {
  it('appends what end returns once the source completes, in order', async () => {
    const end = jest.fn(() => ['x', 'y']);
    const out = endWith(of('a', 'b'), end);
    expect(end).not.toHaveBeenCalled();
    await expect(lastValueFrom(out.pipe(toArray()))).resolves.toEqual(['a', 'b', 'x', 'y']);
    expect(end).toHaveBeenCalledTimes(1);
  });

  it('completes without a tail when end returns none', async () => {
    await expect(lastValueFrom(endWith(of(1), () => []).pipe(toArray()))).resolves.toEqual([1]);
  });

  it('fails the stream with what end throws, after the values already sent', async () => {
    const seen: string[] = [];
    const out = endWith(of('a'), () => {
      throw streamIncompleteError('completion');
    });
    await expect(
      new Promise((resolve, reject) =>
        out.subscribe({ next: (v) => seen.push(v), error: reject, complete: () => resolve(seen) }),
      ),
    ).rejects.toMatchObject({ status: 502, code: 'upstream_stream_incomplete' });
    expect(seen).toEqual(['a']);
  });

  it("passes the source's error through without calling end", async () => {
    const end = jest.fn(() => ['x']);
    const boom = new Error('boom');
    await expect(
      lastValueFrom(
        endWith(
          throwError(() => boom),
          end,
        ),
      ),
    ).rejects.toBe(boom);
    expect(end).not.toHaveBeenCalled();
  });

  it('unsubscribing tears the source down and never calls end', () => {
    let tornDown = false;
    const source = new Observable<number>((s) => {
      s.next(1);
      return () => (tornDown = true);
    });
    const end = jest.fn(() => [2]);
    const seen: number[] = [];
    const sub = endWith(source, end).subscribe((v) => seen.push(v));
    sub.unsubscribe();
    expect(tornDown).toBe(true);
    expect(end).not.toHaveBeenCalled();
    expect(seen).toEqual([1]);
  });

  it('stops the tail when the consumer has had enough', async () => {
    const subject = new Subject<string>();
    const got = lastValueFrom(endWith(subject, () => ['x', 'y', 'z']).pipe(take(2), toArray()));
    subject.next('a');
    subject.complete();
    await expect(got).resolves.toEqual(['a', 'x']);
  });
});
