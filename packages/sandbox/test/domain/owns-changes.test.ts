// The domain owns its changes: no source file outside src/domain changes what the Store holds (its
// maps, lists, logs, the manager's and the account's records, a port's configuration) other than
// through the Store's methods. The sources are read with the TypeScript compiler and its types: a
// change is an assignment, `delete`, `++`/`--`, `Object.assign` or a call of a method that changes a
// Map, Set or array; it is the Store's when what it changes comes from a Store (a member of the Store
// class, or a value whose type is the Store), followed through local names, `for … of`, calls of
// what the Store holds and arrow functions that answer one (`const m = () => store.manager`).
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const pkg = fileURLToPath(new URL('../..', import.meta.url));
const STATE = join(pkg, 'src', 'domain', 'state.ts');

/** What JavaScript's own Maps, Sets and arrays change in place. */
const MUTATORS = new Set([
  'set',
  'delete',
  'clear',
  'add',
  'push',
  'pop',
  'shift',
  'unshift',
  'splice',
  'sort',
  'reverse',
  'fill',
  'copyWithin',
]);
/** What JavaScript's own arrays answer as a new array of their own elements. */
const COPIES = new Set(['filter', 'slice', 'concat', 'toSorted', 'toReversed']);
/** What JavaScript's own arrays answer as a new array (or a value that is no element): its result is not the Store's. */
const FRESH = new Set([
  'filter',
  'map',
  'flatMap',
  'slice',
  'concat',
  'toSorted',
  'toReversed',
  'toSpliced',
  'with',
  'join',
  'some',
  'every',
  'includes',
  'indexOf',
  'has',
  'reduce',
  'keys',
]);

/** The Store's changes made outside src/domain, as `file:line text`; `extra` adds sources (path -> text) to the program. */
function changesOutsideDomain(extra: Record<string, string> = {}): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(pkg, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('the sandbox tsconfig.json does not parse');
  const options = { ...parsed.options, noEmit: true, composite: false, incremental: false, declaration: false };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => f in extra || fileExists(f);
  host.readFile = (f) => extra[f] ?? readFile(f);
  host.getSourceFile = (f, lang, ...rest) =>
    f in extra ? ts.createSourceFile(f, extra[f] as string, lang, true) : getSourceFile(f, lang, ...rest);
  const program = ts.createProgram({ rootNames: [...parsed.fileNames, ...Object.keys(extra)], options, host });
  const checker = program.getTypeChecker();
  const state = program.getSourceFile(STATE);
  const storeClass = state?.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === 'Store');
  if (!storeClass?.name) throw new Error('domain/state.ts declares no class Store');
  const storeSymbol = checker.getSymbolAtLocation(storeClass.name);

  const strip = (e: ts.Expression): ts.Expression =>
    ts.isParenthesizedExpression(e) ||
    ts.isAsExpression(e) ||
    ts.isNonNullExpression(e) ||
    ts.isSatisfiesExpression(e) ||
    ts.isTypeAssertionExpression(e)
      ? strip(e.expression)
      : e;
  const isStore = (e: ts.Expression) => checker.getTypeAtLocation(e).getSymbol() === storeSymbol;
  const F = ts.TypeFlags;
  const PRIMITIVE = F.StringLike | F.NumberLike | F.BooleanLike | F.BigIntLike | F.ESSymbolLike | F.Undefined | F.Null | F.Void;
  const isPrimitive = (e: ts.Expression) => (checker.getTypeAtLocation(e).flags & PRIMITIVE) !== 0;
  /** Whether `e` is one of JavaScript's own Maps, Sets or arrays (a Clock's `set` is no change of the Store's data). */
  const builtIn = (e: ts.Expression) => {
    const t = checker.getTypeAtLocation(e);
    const decl = (t.getSymbol() ?? t.aliasSymbol)?.declarations?.[0];
    return (
      checker.isArrayType(t) ||
      (!!decl && program.isSourceFileDefaultLibrary(decl.getSourceFile()) && /^(Map|Set|WeakMap|WeakSet)$/.test(t.getSymbol()?.name ?? ''))
    );
  };
  const ofStore = (s: ts.Symbol | undefined) => !!s?.declarations?.some((d) => d.parent === storeClass);

  /** Whether this question about this node is asked the first time in one search (no loop through names or recursion). */
  const first = (seen: Set<string>, question: string, n: ts.Node) => {
    const key = `${question} ${n.getSourceFile().fileName} ${n.pos} ${n.end}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
  /** The expressions a function body returns (not those of the functions within it). */
  const returned = (body: ts.Node): ts.Expression[] => {
    const out: ts.Expression[] = [];
    const walk = (n: ts.Node) => {
      if (ts.isReturnStatement(n) && n.expression) out.push(n.expression);
      else if (!ts.isFunctionLike(n)) ts.forEachChild(n, walk);
    };
    ts.forEachChild(body, walk);
    return out;
  };

  /** Whether `e` is something the Store holds (or the Store itself). */
  function fromStore(expr: ts.Expression, seen = new Set<string>()): boolean {
    const e = strip(expr);
    if (!first(seen, 'holds', e)) return false;
    if (isStore(e)) return true;
    if (ts.isPropertyAccessExpression(e)) return ofStore(checker.getSymbolAtLocation(e.name)) || fromStore(e.expression, seen);
    if (ts.isElementAccessExpression(e)) return fromStore(e.expression, seen) || elementsFromStore(e.expression, seen);
    if (ts.isBinaryExpression(e) && [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(e.operatorToken.kind))
      return fromStore(e.left, seen) || fromStore(e.right, seen);
    if (ts.isConditionalExpression(e)) return fromStore(e.whenTrue, seen) || fromStore(e.whenFalse, seen);
    if (ts.isCallExpression(e)) {
      if (isPrimitive(e)) return false;
      const callee = strip(e.expression);
      if (ts.isPropertyAccessExpression(callee)) return !FRESH.has(callee.name.text) && fromStore(callee.expression, seen);
      // A function that answers what the Store holds: `m()` of `const m = () => store.manager`, wherever `m` is passed.
      const fn = checker.getResolvedSignature(e)?.declaration;
      if (!fn || !('body' in fn) || !fn.body || fn.getSourceFile().isDeclarationFile) return false;
      if (!ts.isBlock(fn.body)) return fromStore(fn.body as ts.Expression, seen);
      return returned(fn.body).some((r) => fromStore(r, seen));
    }
    if (ts.isIdentifier(e)) {
      let decl: ts.Node | undefined = checker.getSymbolAtLocation(e)?.valueDeclaration;
      while (decl && ts.isBindingElement(decl)) decl = decl.parent.parent;
      if (!decl || !ts.isVariableDeclaration(decl)) return false;
      const list = decl.parent;
      if (ts.isVariableDeclarationList(list) && ts.isForOfStatement(list.parent))
        return fromStore(list.parent.expression, seen) || elementsFromStore(list.parent.expression, seen);
      return !!decl.initializer && fromStore(decl.initializer, seen);
    }
    return false;
  }

  /** Whether `e` is a new array of what the Store holds: `[...store.zones.values()]`, `store.reqLogs.filter(…)`, through names and calls. */
  function elementsFromStore(expr: ts.Expression, seen = new Set<string>()): boolean {
    const e = strip(expr);
    if (!first(seen, 'elements', e)) return false;
    if (ts.isArrayLiteralExpression(e))
      return e.elements.some((x) => ts.isSpreadElement(x) && (fromStore(x.expression, seen) || elementsFromStore(x.expression, seen)));
    if (ts.isCallExpression(e)) {
      const callee = strip(e.expression);
      if (ts.isPropertyAccessExpression(callee))
        return COPIES.has(callee.name.text) && (fromStore(callee.expression, seen) || elementsFromStore(callee.expression, seen));
      const fn = checker.getResolvedSignature(e)?.declaration;
      if (!fn || !('body' in fn) || !fn.body || fn.getSourceFile().isDeclarationFile) return false;
      const out = ts.isBlock(fn.body) ? returned(fn.body) : [fn.body as ts.Expression];
      return out.some((r) => elementsFromStore(r, seen));
    }
    if (ts.isIdentifier(e)) {
      const decl = checker.getSymbolAtLocation(e)?.valueDeclaration;
      return !!decl && ts.isVariableDeclaration(decl) && !!decl.initializer && elementsFromStore(decl.initializer, seen);
    }
    return false;
  }

  /** The object a change changes: `a.b` of `a.b.c = v`, of `delete a.b.c`, of `a.b.push(v)`. */
  const holder = (target: ts.Expression): ts.Expression | undefined => {
    const t = strip(target);
    return ts.isPropertyAccessExpression(t) || ts.isElementAccessExpression(t) ? t.expression : undefined;
  };
  const assigns = (k: ts.SyntaxKind) => k >= ts.SyntaxKind.FirstAssignment && k <= ts.SyntaxKind.LastAssignment;

  const found: string[] = [];
  for (const file of program.getSourceFiles()) {
    const rel = relative(pkg, file.fileName);
    if (!rel.startsWith(`src${sep}`) || rel.startsWith(join('src', 'domain') + sep)) continue;
    const visit = (n: ts.Node) => {
      let changed: ts.Expression | undefined;
      if (ts.isBinaryExpression(n) && assigns(n.operatorToken.kind)) changed = holder(n.left);
      else if (ts.isDeleteExpression(n)) changed = holder(n.expression);
      else if (
        (ts.isPrefixUnaryExpression(n) || ts.isPostfixUnaryExpression(n)) &&
        [ts.SyntaxKind.PlusPlusToken, ts.SyntaxKind.MinusMinusToken].includes(n.operator)
      )
        changed = holder(n.operand);
      else if (ts.isCallExpression(n)) {
        const callee = strip(n.expression);
        if (ts.isPropertyAccessExpression(callee) && MUTATORS.has(callee.name.text) && builtIn(callee.expression))
          changed = callee.expression;
        else if (ts.isPropertyAccessExpression(callee) && callee.getText() === 'Object.assign') changed = n.arguments[0];
      }
      if (changed && fromStore(changed)) {
        const { line } = file.getLineAndCharacterOfPosition(n.getStart());
        found.push(`${rel.split(sep).join('/')}:${line + 1} ${n.getText().split('\n')[0]}`);
      }
      ts.forEachChild(n, visit);
    };
    visit(file);
  }
  return found;
}

const PLANTED = join(dirname(STATE), '..', 'manager', 'planted-changes.ts');
/** A source the check must fault: one change of each kind, each through another way of reaching the Store. */
const PLANTED_TEXT = [
  "import type { Store } from '../domain/state.js';",
  'export function planted(store: Store, c: { store: Store }): void {',
  '  store.ports.delete(1);',
  '  c.store.bans.clear();',
  '  const m = () => store.manager;',
  "  m().general_log.push('x');",
  '  const har = m().har;',
  '  har.splice(0);',
  '  for (const cfg of store.ports.values()) (cfg as Record<string, unknown>).zone = undefined;',
  '  delete store.manager.settings.zone;',
  '  store.account.pending_costs += 1;',
  "  Object.assign(store.zones.get('z') ?? {}, { disabled: true });",
  '  const { usage } = store;',
  '  usage.length = 0;',
  '  for (const z of [...store.zones.values()].filter((z) => z.disabled)) z.whitelist = [];',
  '  const kept = store.reqLogs.filter(Boolean);',
  '  kept.push(kept[0]!);',
  "  store.clock.set('2020-01-01T00:00:00Z');",
  '}',
].join('\n');

describe('the domain owns its changes', () => {
  const all = changesOutsideDomain({ [PLANTED]: PLANTED_TEXT });
  const planted = 'src/manager/planted-changes.ts:';

  it('no source outside src/domain changes what the Store holds', () => {
    expect(all.filter((f) => !f.startsWith(planted))).toEqual([]);
  });

  it('the check finds each kind of change, through names, loops and arrow functions (a Clock is no Map)', () => {
    expect(all.filter((f) => f.startsWith(planted)).map((f) => f.replace(/^[^ ]+ /, ''))).toEqual([
      'store.ports.delete(1)',
      'c.store.bans.clear()',
      "m().general_log.push('x')",
      'har.splice(0)',
      '(cfg as Record<string, unknown>).zone = undefined',
      'delete store.manager.settings.zone',
      'store.account.pending_costs += 1',
      "Object.assign(store.zones.get('z') ?? {}, { disabled: true })",
      'usage.length = 0',
      'z.whitelist = []',
    ]);
  });
});
