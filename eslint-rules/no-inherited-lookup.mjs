// @ts-check
import { ESLintUtils } from '@typescript-eslint/utils';
import ts from 'typescript';

/**
 * Flags `table[key]` where `key` is any string (not a literal union) and `table` is a
 * plain object type: with a key from a client or an upstream, such as "constructor",
 * "valueOf" or "__proto__", the lookup finds Object.prototype's members (and a write swaps
 * the prototype). Use `own(table, key)` / `setOwn(table, key, value)` from
 * src/common/own.ts, or a Map, instead.
 */
const createRule = ESLintUtils.RuleCreator((name) => `eslint-rules/${name}.mjs`);

function isWideString(type) {
  if (type.isUnion()) {
    return type.types.some(isWideString);
  }
  return (type.flags & (ts.TypeFlags.String | ts.TypeFlags.TemplateLiteral | ts.TypeFlags.StringMapping)) !== 0;
}

function isPlainObjectType(checker, type) {
  if (type.isUnion()) {
    return type.types.some((t) => isPlainObjectType(checker, t));
  }
  if ((type.flags & ts.TypeFlags.Object) === 0) {
    return false;
  }
  if (checker.isArrayType(type) || checker.isTupleType(type)) {
    return false;
  }
  // Only types that answer any string key: index signatures and Record<string, …>.
  return checker.getIndexInfoOfType(type, ts.IndexKind.String) !== undefined;
}

export default createRule({
  name: 'no-inherited-lookup',
  meta: {
    type: 'problem',
    docs: { description: 'Disallow string-keyed lookups that can reach Object.prototype' },
    messages: {
      read: "'{{text}}' can find an inherited member (e.g. 'constructor') for an untrusted key: use own() from src/common/own.ts or a Map.",
      write: "'{{text}}' can set the prototype when the key is '__proto__': use setOwn() from src/common/own.ts or a Map.",
    },
    schema: [],
  },
  defaultOptions: [],
  create(context) {
    const services = ESLintUtils.getParserServices(context);
    const checker = services.program.getTypeChecker();
    return {
      MemberExpression(node) {
        if (!node.computed || node.property.type === 'Literal') {
          return;
        }
        const keyType = services.getTypeAtLocation(node.property);
        if (!isWideString(keyType)) {
          return;
        }
        const objectType = services.getTypeAtLocation(node.object);
        if (!isPlainObjectType(checker, checker.getNonNullableType(objectType))) {
          return;
        }
        const parent = node.parent;
        const isWrite =
          (parent.type === 'AssignmentExpression' && parent.left === node) ||
          (parent.type === 'UpdateExpression');
        context.report({
          node,
          messageId: isWrite ? 'write' : 'read',
          data: { text: context.sourceCode.getText(node).slice(0, 60) },
        });
      },
    };
  },
});
