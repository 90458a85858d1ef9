import { GatewayError } from '../../../common/errors/gateway-errors';
import type { ResponsesInputItem } from '../responses-request.dto';
import { inputItemsPage, responseView } from './stored-view';

const ITEMS: ResponsesInputItem[] = ['a', 'b', 'c', 'd', 'e'].map((id) => ({
  id,
  type: 'message',
  role: 'user',
  content: [{ type: 'input_text', text: id }],
}));
const page = (q: string) => inputItemsPage(ITEMS, new URLSearchParams(q));
const ids = (q: string) => page(q).data.map((i) => i.id);

describe('input_items paging, as OpenAI pages', () => {
  it('lists newest first by default, 20 at most', () => {
    expect(page('')).toEqual({
      object: 'list',
      data: [...ITEMS].reverse(),
      first_id: 'e',
      last_id: 'a',
      has_more: false,
    });
  });

  it('pages with limit and after, in either order', () => {
    expect(page('limit=2')).toMatchObject({ first_id: 'e', last_id: 'd', has_more: true });
    expect(ids('limit=2&after=d')).toEqual(['c', 'b']);
    expect(page('limit=2&after=b').has_more).toBe(false);
    expect(ids('order=asc&limit=3&after=a')).toEqual(['b', 'c', 'd']);
  });

  it('pages backwards with before', () => {
    expect(ids('order=asc&before=d&limit=2')).toEqual(['b', 'c']);
    expect(page('order=asc&before=d&limit=2').has_more).toBe(true);
    expect(ids('order=asc&before=c&limit=5')).toEqual(['a', 'b']);
    expect(ids('order=asc&after=a&before=e')).toEqual(['b', 'c', 'd']);
  });

  it('refuses a bad limit, order or cursor with a 400 naming it', () => {
    for (const [q, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=x', 'limit'],
      ['order=up', 'order'],
      ['after=zz', 'after'],
      ['before=zz', 'before'],
    ]) {
      const error = (() => {
        try {
          page(q);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).status).toBe(400);
      expect((error as GatewayError).param).toBe(param);
    }
  });
});

describe('reasoning payloads of stored objects', () => {
  const reasoning = {
    id: 'rs_1',
    type: 'reasoning',
    summary: [],
    encrypted_content: 'gwant1.sig.x',
  };

  it('are shown only when include asks for them', () => {
    const stored = JSON.stringify({ id: 'resp_1', output: [reasoning] });
    expect(responseView(stored, new URLSearchParams())).toEqual({
      id: 'resp_1',
      output: [{ id: 'rs_1', type: 'reasoning', summary: [] }],
    });
    expect(
      responseView(stored, new URLSearchParams('include[]=reasoning.encrypted_content')),
    ).toEqual({ id: 'resp_1', output: [reasoning] });
    expect(
      inputItemsPage([reasoning], new URLSearchParams('include=reasoning.encrypted_content')).data,
    ).toEqual([reasoning]);
    expect(inputItemsPage([reasoning], new URLSearchParams()).data).toEqual([
      { id: 'rs_1', type: 'reasoning', summary: [] },
    ]);
  });
});
