import type { ResponsesTool } from './responses-request.dto';

/** A function of a `namespace` tool, as the client named it. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/** Separates namespace and function in a flat name when the plain name is taken. */
const JOIN = '__';

/**
 * The flat names the canonical path gives the functions of `namespace` tools (Codex groups
 * its agent tools that way): other upstreams know only flat function tools, so each
 * function is offered under its own name, or `<namespace>__<name>` when that name is
 * already taken. Both directions derive from the request's own `tools`, so the decoder and
 * the encoder agree without carrying state between them.
 */
export class ToolNamespaces {
  private readonly byFlat = new Map<string, NamespacedName>();
  private readonly byQualified = new Map<string, string>();

  private constructor(tools: readonly ResponsesTool[]) {
    const taken = new Set<string>();
    for (const t of tools) {
      if (t.type === 'function' && typeof t.name === 'string') {
        taken.add(t.name);
      }
    }
    for (const t of tools) {
      if (t.type !== 'namespace' || typeof t.name !== 'string') {
        continue;
      }
      for (const fn of namespaceFunctions(t)) {
        let flat = fn.name;
        if (taken.has(flat)) {
          flat = qualifiedName(t.name, fn.name);
        }
        taken.add(flat);
        this.byFlat.set(flat, { namespace: t.name, name: fn.name });
        this.byQualified.set(qualified(t.name, fn.name), flat);
      }
    }
  }

  /** The request's namespaces, or undefined when it declares none (the usual case). */
  static of(tools: readonly ResponsesTool[] | null | undefined): ToolNamespaces | undefined {
    return tools?.some((t) => t.type === 'namespace') ? new ToolNamespaces(tools) : undefined;
  }

  /** The flat name of `namespace`'s function `name` (a history item's call). */
  flat(namespace: string, name: string): string {
    return this.byQualified.get(qualified(namespace, name)) ?? qualifiedName(namespace, name);
  }

  /** The namespace and name behind a flat name, or undefined for a top-level function. */
  split(flat: string): NamespacedName | undefined {
    return this.byFlat.get(flat);
  }
}

/** The flat name of a history call whose namespace is not among the request's tools. */
export function qualifiedName(namespace: string, name: string): string {
  return `${namespace}${JOIN}${name}`;
}

function qualified(namespace: string, name: string): string {
  return `${namespace}\u0000${name}`;
}

/** The function tools of a `namespace` tool (the canonical path refuses any other kind inside). */
export function namespaceFunctions(tool: ResponsesTool): (ResponsesTool & { name: string })[] {
  const inner = Array.isArray(tool.tools) ? (tool.tools as ResponsesTool[]) : [];
  return inner.filter(
    (t): t is ResponsesTool & { name: string } =>
      t?.type === 'function' && typeof t.name === 'string',
  );
}
