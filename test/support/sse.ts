/** One event of an SSE body: its `event:` name, if any, and its `data:` lines joined. */
export interface SseFrame {
  event?: string;
  data: string;
}

/** The events of a raw SSE body, in order; comments (`: keepalive`) left out. */
export function sseEvents(text: string): SseFrame[] {
  return text
    .split(/\n\n/)
    .map((block) => block.split('\n').filter((l) => l !== '' && !l.startsWith(':')))
    .filter((lines) => lines.length > 0)
    .map((lines) => {
      const event = lines.find((l) => l.startsWith('event: '))?.slice('event: '.length);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice('data: '.length))
        .join('\n');
      return event === undefined ? { data } : { event, data };
    })
    .filter((frame) => frame.data !== '' || frame.event !== undefined);
}

/** The events of an SSE body with their data parsed as JSON (chat's `[DONE]` left out). */
export function parseSse(text: string): { event?: string; data: any }[] {
  return sseEvents(text)
    .filter((frame) => frame.data !== '' && frame.data !== '[DONE]')
    .map((frame) => ({ event: frame.event, data: JSON.parse(frame.data) }));
}
