// @ts-check
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLintUtils } from '@typescript-eslint/utils';
import { resolveImport, violation } from './layers.mjs';

/**
 * Keeps src/ to its layer order (eslint-rules/layers.mjs, drawn in
 * docs/architecture.md#layers): a folder imports only from its own layer and the layers
 * below it. Every form of import counts, type-only ones included: a type from above ties
 * the lower folder to the upper one's changes as much as a value does.
 */
const createRule = ESLintUtils.RuleCreator((name) => `eslint-rules/${name}.mjs`);
const src = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

export default createRule({
  name: 'layer-order',
  meta: {
    type: 'problem',
    docs: { description: 'Disallow imports against the layer order of src/' },
    messages: {
      wrongWay: '{{why}}. See docs/architecture.md#layers.',
    },
    schema: [],
  },
  defaultOptions: [],
  create(context) {
    const file = context.filename;
    if (!file.startsWith(src + sep)) {
      return {};
    }
    const from = relative(src, file).split(sep).join('/').replace(/\.ts$/, '');
    /** @param {import('@typescript-eslint/utils').TSESTree.Node} node @param {unknown} specifier */
    const check = (node, specifier) => {
      if (typeof specifier !== 'string') {
        return;
      }
      const to = resolveImport(file, specifier, src);
      const why = to === undefined ? undefined : violation(from, to);
      if (why !== undefined) {
        context.report({ node, messageId: 'wrongWay', data: { why } });
      }
    };
    return {
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) =>
        node.source.type === 'Literal' && check(node.source, node.source.value),
      TSImportType: (node) => {
        const arg = node.argument;
        if (arg.type === 'TSLiteralType' && arg.literal.type === 'Literal') {
          check(arg.literal, arg.literal.value);
        }
      },
      CallExpression: (node) => {
        const [arg] = node.arguments;
        if (
          node.callee.type === 'Identifier' &&
          node.callee.name === 'require' &&
          arg?.type === 'Literal'
        ) {
          check(arg, arg.value);
        }
      },
    };
  },
});
