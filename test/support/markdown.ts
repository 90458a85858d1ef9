import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The repository's root (jest runs from it). */
export const ROOT = join(__dirname, '..', '..');

/** The manual: the README, CONTRIBUTING.md and every page under docs/, repository-relative. */
export function manualFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs.sort()];
}

/** Every README.md under src/ (the protections' own pages), repository-relative. */
export function sourceReadmes(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (entry.name === 'README.md') {
        found.push(relative(ROOT, path));
      }
    }
  };
  walk(join(ROOT, 'src'));
  return found.sort();
}

export interface CodeBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The reason of a `<!-- not run: reason -->` comment right above the fence. */
  notRun?: string;
}

/** The fenced code blocks of a markdown text. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) {
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) {
      body.push(lines[i]);
    }
    let above = start - 1;
    while (above >= 0 && lines[above].trim() === '') {
      above--;
    }
    const marker = above >= 0 ? /^<!-- not run: (.+?) -->$/.exec(lines[above].trim()) : null;
    blocks.push({
      file,
      line: start + 1,
      lang: open[1],
      code: body.join('\n'),
      ...(marker ? { notRun: marker[1] } : {}),
    });
  }
  return blocks;
}

/** The text without its fenced code blocks. */
function withoutFences(text: string): string {
  return text.replace(/^```[\s\S]*?^```\s*$/gm, '');
}

/** The text without code blocks and inline code spans (where links are not links). */
export function prose(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, '');
}

/** Targets of the markdown links and images of a text, outside code. */
export function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const m of prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    targets.push(m[1]);
  }
  return targets;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a markdown text's headings (a repeated heading gets -1, -2 …). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export function read(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}
