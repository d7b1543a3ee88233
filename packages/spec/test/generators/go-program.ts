import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Call } from './calls.js';

// Writes the Go every-operation program: one call per operation through the generated Go client
// (go-experimental: `client.<Tag>Api.<Operation>(ctx, path params…).<Param>(value)….Execute()`), with
// the arguments of the Call (the spec's examples) in the types of the generated signatures, which are
// read from the generated sources.

interface GoMethod {
  service: string;
  name: string;
  /** The path arguments after ctx: name and Go type. */
  args: { name: string; type: string }[];
  /** The request builder's setters: method name -> argument type. */
  setters: Map<string, string>;
  returnsValue: boolean;
}

interface GoPackage {
  pkg: string;
  methods: Map<string, GoMethod>;
}

/** What the generator makes of a name: compared without case and separators. */
const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

export function readGoPackage(dir: string, pkg: string): GoPackage {
  const methods = new Map<string, GoMethod>();
  for (const f of readdirSync(dir).filter((f) => /^api_.*\.go$/.test(f))) {
    const src = readFileSync(join(dir, f), 'utf8');
    const setters = new Map<string, Map<string, string>>();
    const execute = new Map<string, boolean>();
    for (const m of src.matchAll(/^func \(r (\w+)\) (\w+)\((\w+) ([^)]+)\) \w+ \{$/gm)) {
      const list = setters.get(m[1] as string) ?? new Map<string, string>();
      list.set(m[2] as string, m[4] as string);
      setters.set(m[1] as string, list);
    }
    for (const m of src.matchAll(/^func \(r (\w+)\) Execute\(\) \((.*)\) \{$/gm))
      execute.set(m[1] as string, (m[2] ?? '').split(',').length === 3);
    for (const m of src.matchAll(/^func \(a \*(\w+)Service\) (\w+)\(ctx _context\.Context(?:, ([^)]*))?\) (\w+) \{$/gm)) {
      const args = (m[3] ?? '')
        .split(', ')
        .filter(Boolean)
        .map((a) => {
          const [name, type] = a.split(' ');
          return { name: name as string, type: type as string };
        });
      const request = m[4] as string;
      methods.set(norm(m[2] as string), {
        service: m[1] as string,
        name: m[2] as string,
        args,
        setters: setters.get(request) ?? new Map(),
        returnsValue: execute.get(request) ?? false,
      });
    }
  }
  return { pkg, methods };
}

const goString = (v: unknown) => JSON.stringify(typeof v === 'string' ? v : JSON.stringify(v));

/** A Go expression of `type` for a JSON value. */
function literal(pkg: string, type: string, value: unknown): string {
  if (type === 'string') return goString(value);
  if (/^(int|float)\d+$/.test(type) && typeof value === 'number') return `${type}(${value})`;
  if (type === 'bool' && typeof value === 'boolean') return String(value);
  const qualified = /^[A-Z]/.test(type) ? `${pkg}.${type}` : type;
  return `decode[${qualified}](${goString(value)})`;
}

function callExpression(p: GoPackage, client: string, call: Call): string {
  const m = p.methods.get(norm(call.operationId));
  if (!m) throw new Error(`the Go client has no method for ${call.operationId}`);
  const params = new Map(call.params.map((x) => [norm(x.name), x.value]));
  const args = m.args.map((a) => {
    if (!params.has(norm(a.name))) throw new Error(`${call.operationId}: no value for path argument ${a.name}`);
    return literal(p.pkg, a.type, params.get(norm(a.name)));
  });
  const chain = [...m.setters].flatMap(([setter, type]) => {
    if (params.has(norm(setter))) return [`.${setter}(${literal(p.pkg, type, params.get(norm(setter)))})`];
    // The setter that is no parameter and takes a model (or, for an untyped body, anything) takes the request body.
    if (call.body !== undefined && (/^[A-Z]/.test(type) || type === 'interface{}'))
      return [`.${setter}(${literal(p.pkg, type, call.body)})`];
    return [];
  });
  const invoke = `${client}.${m.service}.${m.name}(${['ctx', ...args].join(', ')})${chain.join('')}.Execute()`;
  return m.returnsValue ? `return ${invoke}` : `res, err := ${invoke}\n\t\treturn nil, res, err`;
}

/** The program's main.go for both APIs. */
export function goProgram(apis: { api: string; pkg: GoPackage; module: string; calls: Call[] }[]): string {
  const blocks = apis.map(({ api, pkg, calls }) => {
    // The only API key of the bundles is the manager token, which getNewToken issues (the scheme's description says so).
    const token = pkg.methods.get(norm('getNewToken'));
    const lines = calls.map((c) => {
      const auth =
        c.credential && token
          ? `tok, _, err := ${api}.${token.service}.${token.name}(ctx).Execute()
		if err != nil {
			return nil, nil, err
		}
		ctx = context.WithValue(ctx, ${pkg.pkg}.ContextAPIKeys, map[string]${pkg.pkg}.APIKey{${JSON.stringify(c.credential.scheme)}: {Key: tok.GetToken()}})
		`
          : '';
      return `	run(${JSON.stringify(api)}, ${JSON.stringify(c.operationId)}, urls[${JSON.stringify(api)}], func() (interface{}, *http.Response, error) {
		ctx := ${api}Ctx
		${auth}${callExpression(pkg, api, c)}
	})`;
    });
    return `	${api}Cfg := ${pkg.pkg}.NewConfiguration()
	${api}Cfg.Servers = ${pkg.pkg}.ServerConfigurations{{URL: urls[${JSON.stringify(api)}]}}
	${api} := ${pkg.pkg}.NewAPIClient(${api}Cfg)
	${api}Ctx := context.Background()
	if bearer[${JSON.stringify(api)}] != "" {
		${api}Ctx = context.WithValue(${api}Ctx, ${pkg.pkg}.ContextAccessToken, bearer[${JSON.stringify(api)}])
	}
${lines.join('\n')}`;
  });
  return `// Written by every-operation test (packages/spec/test/generators/go-program.ts) from the spec's examples.
// Usage: every-operation CALLS_JSON. Prints one JSON line per call; exits 1 if any call failed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

${apis.map((a) => `\t${a.pkg.pkg} ${JSON.stringify(a.module)}`).join('\n')}
)

func decode[T any](text string) T {
	var v T
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		panic(err)
	}
	return v
}

var failed bool

// run puts the sandbox back to its seed, makes one call and prints its line.
func run(api, operationID, url string, fn func() (interface{}, *http.Response, error)) {
	line := map[string]interface{}{"api": api, "operationId": operationID}
	res, err := http.Post(url+"/__sandbox/reset", "application/json", bytes.NewBufferString("{}"))
	if err == nil {
		res.Body.Close()
	}
	result, res, err := fn()
	if res != nil {
		line["status"] = res.StatusCode
	}
	if err != nil {
		failed = true
		line["ok"] = false
		line["error"] = err.Error()
		if apiErr, ok := err.(interface{ Body() []byte }); ok {
			line["detail"] = string(apiErr.Body())
		}
	} else {
		line["ok"] = true
		line["type"] = fmt.Sprintf("%T", result)
		line["result"] = result
	}
	out, _ := json.Marshal(line)
	fmt.Println(string(out))
}

func main() {
	var spec map[string]struct {
		URL    string \`json:"url"\`
		Bearer string \`json:"bearer"\`
	}
	text, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(text, &spec); err != nil {
		panic(err)
	}
	urls, bearer := map[string]string{}, map[string]string{}
	for api, s := range spec {
		urls[api], bearer[api] = s.URL, s.Bearer
	}
${blocks.join('\n')}
	if failed {
		os.Exit(1)
	}
}
`;
}
