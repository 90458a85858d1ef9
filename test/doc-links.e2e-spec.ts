import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { ROOT, anchors, linkTargets, manualFiles, read, sourceReadmes } from './support/markdown';

/**
 * Every relative link of the README, CONTRIBUTING.md, docs/ and the READMEs under src/
 * resolves: the file exists and, for `page.md#anchor` or `#anchor`, so does the heading.
 */
describe('links in the manual', () => {
  const files = [...manualFiles(), ...sourceReadmes()];

  it('covers the README, CONTRIBUTING.md and the docs', () => {
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/architecture.md']),
    );
  });

  it.each(files)('%s: every relative link resolves', (file) => {
    const broken: string[] = [];
    for (const target of linkTargets(read(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        continue;
      } // https:, mailto:
      const [path, anchor] = target.split('#', 2);
      const resolved = path === '' ? file : normalize(join(dirname(file), path));
      if (resolved.startsWith('..') || !existsSync(join(ROOT, resolved))) {
        broken.push(`${target} (no ${resolved})`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md')) {
        if (!anchors(read(resolved)).has(anchor)) {
          broken.push(`${target} (no heading #${anchor})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('finds a broken link and a broken anchor', () => {
    // The checker itself: a text with one good and two bad links.
    const text = '# Top\n[ok](#top) [bad](#nowhere) `[code](#ignored)` ![img](missing.png)';
    expect(linkTargets(text)).toEqual(['#top', '#nowhere', 'missing.png']);
    expect(anchors(text).has('top')).toBe(true);
    expect(anchors(text).has('nowhere')).toBe(false);
    expect(anchors('## Responses API (`POST /v1/responses`)')).toEqual(
      new Set(['responses-api-post-v1responses']),
    );
  });
});
