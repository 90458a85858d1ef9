// @ts-check
import { ESLintUtils } from '@typescript-eslint/utils';

/**
 * Flags `obj.prop = () => …` (and `= function …`): V8's parser marks a function literal
 * assigned straight to a property as long-lived (its heuristic for `Foo.prototype.m =
 * function`) and allocates the closure in old space. An old closure keeps its young
 * context, and through the context chain the whole request that made it, alive through
 * every scavenge until the next full GC: measured on the gateway, one such closure per
 * request promoted ~1.6 MB per scavenge and tripled the scavenge pauses that make the p99
 * (bench/README.md). Bind the closure to a local first (`const f = () => …; obj.prop = f`),
 * which V8 allocates young.
 */
const createRule = ESLintUtils.RuleCreator((name) => `eslint-rules/${name}.mjs`);

export default createRule({
  name: 'no-closure-assigned-to-property',
  meta: {
    type: 'problem',
    docs: { description: 'Disallow assigning a function literal straight to a property' },
    messages: {
      pretenured:
        'A function literal assigned to a property is allocated in old space by V8 and keeps its whole context alive until a full GC: bind it to a local first.',
    },
    schema: [],
  },
  defaultOptions: [],
  create(context) {
    return {
      AssignmentExpression(node) {
        if (
          node.left.type === 'MemberExpression' &&
          (node.right.type === 'ArrowFunctionExpression' ||
            node.right.type === 'FunctionExpression')
        ) {
          context.report({ node: node.right, messageId: 'pretenured' });
        }
      },
    };
  },
});
