import { Observable, lastValueFrom, of, toArray } from 'rxjs';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayResponse } from '../../common/request-context';
import type { CanonicalEvent, CanonicalRequest } from '../../core/canonical';
import type { CallContext, GeneratingProvider } from '../../upstream/provider.interface';
import { startCanonical } from './canonical-path';

const START: CanonicalEvent = { type: 'message_start', id: 'm1', model: 'x', created: 1 };
const TEXT: CanonicalEvent[] = [
  { type: 'block_start', index: 0, block: { kind: 'text' } },
  { type: 'text_delta', index: 0, text: 'partial' },
];
const STOP: CanonicalEvent = {
  type: 'message_stop',
  finishReason: 'stop',
  usage: { inputTokens: 1, outputTokens: 1 },
};

function start(
  events: Observable<CanonicalEvent>,
  upstreamApi: string,
  stream = true,
): Promise<Observable<CanonicalEvent>> {
  const provider = { generate: () => events } as unknown as GeneratingProvider;
  return startCanonical(
    provider,
    { stream } as CanonicalRequest,
    { id: 'm', upstreamApi } as CatalogModel,
    { droppedParams: [] } as unknown as CallContext,
    { setHeader: jest.fn(), removeHeader: jest.fn() } as unknown as GatewayResponse,
  );
}

describe('startCanonical', () => {
  it.each(['local', 'chat_completions'])(
    'fails a %s source that completes without message_stop, after its events',
    async (api) => {
      const seen: CanonicalEvent[] = [];
      const events = await start(of(START, ...TEXT), api);
      const error = await new Promise<unknown>((resolve) =>
        events.subscribe({
          next: (e) => seen.push(e),
          error: resolve,
          complete: () => resolve(undefined),
        }),
      );
      expect(error).toMatchObject({ status: 502, kind: 'server', code: 'stream_incomplete' });
      expect(seen).toEqual([START, ...TEXT]);
    },
  );

  it('fails an unstreamed answer without message_stop too', async () => {
    const events = await start(of(START, ...TEXT), 'local', false);
    await expect(lastValueFrom(events.pipe(toArray()))).rejects.toMatchObject({
      code: 'stream_incomplete',
    });
  });

  it('rejects before any header when a translated stream ends without a single event', async () => {
    await expect(start(of(), 'chat_completions')).rejects.toMatchObject({
      code: 'stream_incomplete',
    });
  });

  it('passes a complete source through unchanged', async () => {
    const events = await start(of(START, ...TEXT, STOP), 'local');
    await expect(lastValueFrom(events.pipe(toArray()))).resolves.toEqual([START, ...TEXT, STOP]);
  });
});
