import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Call } from './calls.js';

// Writes the Go every-operation program: one call per operation through the generated Go client,
// with the arguments of the Call (the spec's examples) in the types of the generated signatures,
// which are read from the generated sources (methods of the *ApiService types and their *Opts structs).

interface GoMethod {
  service: string;
  name: string;
  /** The arguments after ctx: name and Go type. */
  args: { name: string; type: string }[];
  returnsValue: boolean;
}

interface GoPackage {
  pkg: string;
  methods: Map<string, GoMethod>;
  /** Opts struct name -> field name -> optional.X type. */
  opts: Map<string, Map<string, string>>;
}

/** What the generator makes of a name: compared without case and separators. */
const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

export function readGoPackage(dir: string, pkg: string): GoPackage {
  const methods = new Map<string, GoMethod>();
  const opts = new Map<string, Map<string, string>>();
  for (const f of readdirSync(dir).filter((f) => /^api_.*\.go$/.test(f))) {
    const src = readFileSync(join(dir, f), 'utf8');
    const sig = /^func \(a \*(\w+)Service\) (\w+)\(ctx _context\.Context(?:, ([^)]*))?\) \((.*)\) \{$/gm;
    for (const m of src.matchAll(sig)) {
      const args = (m[3] ?? '')
        .split(', ')
        .filter(Boolean)
        .map((a) => {
          const [name, type] = a.split(' ');
          return { name: name as string, type: type as string };
        });
      methods.set(norm(m[2] as string), {
        service: m[1] as string,
        name: m[2] as string,
        args,
        returnsValue: (m[4] ?? '').split(',').length === 3,
      });
    }
    for (const m of src.matchAll(/^type (\w+Opts) struct \{\n([\s\S]*?)\n\}/gm)) {
      const fields = new Map<string, string>();
      for (const line of (m[2] as string).split('\n')) {
        const [name, type] = line.trim().split(/\s+/);
        if (name && type) fields.set(name, type);
      }
      opts.set(m[1] as string, fields);
    }
  }
  return { pkg, methods, opts };
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

const OPTIONAL: Record<string, string> = {
  'optional.String': 'string',
  'optional.Int32': 'int32',
  'optional.Int64': 'int64',
  'optional.Float32': 'float32',
  'optional.Float64': 'float64',
  'optional.Bool': 'bool',
  'optional.Interface': 'interface{}',
};

function callExpression(p: GoPackage, client: string, call: Call): string {
  const m = p.methods.get(norm(call.operationId));
  if (!m) throw new Error(`the Go client has no method for ${call.operationId}`);
  const params = new Map(call.params.map((x) => [norm(x.name), x.value]));
  const args = m.args.map((a) => {
    const optsType = a.type.startsWith('*') ? a.type.slice(1) : undefined;
    if (optsType && p.opts.has(optsType)) {
      const fields = [...(p.opts.get(optsType) as Map<string, string>)]
        .filter(([field]) => params.has(norm(field)))
        .map(([field, type]) => {
          const inner = OPTIONAL[type];
          if (!inner) throw new Error(`${call.operationId}: unknown optional type ${type}`);
          const ctor = type.replace('optional.', 'optional.New');
          return `${field}: ${ctor}(${literal(p.pkg, inner, params.get(norm(field)))})`;
        });
      return `&${p.pkg}.${optsType}{${fields.join(', ')}}`;
    }
    if (params.has(norm(a.name))) return literal(p.pkg, a.type, params.get(norm(a.name)));
    if (call.body !== undefined) return literal(p.pkg, a.type, call.body);
    throw new Error(`${call.operationId}: no value for argument ${a.name}`);
  });
  const invoke = `${client}.${m.service}.${m.name}(ctx, ${args.join(', ')})`;
  return m.returnsValue ? `return ${invoke}` : `res, err := ${invoke}\n\t\treturn nil, res, err`;
}

/** The program's main.go for both APIs. */
export function goProgram(apis: { api: string; pkg: GoPackage; module: string; calls: Call[] }[]): string {
  const blocks = apis.map(({ api, pkg, calls }) => {
    const token = pkg.methods.get(norm('getNewToken'));
    const lines = calls.map((c) => {
      const auth =
        c.credential && token
          ? `tok, _, err := ${api}.${token.service}.${token.name}(ctx)
		if err != nil {
			return nil, nil, err
		}
		ctx = context.WithValue(ctx, ${pkg.pkg}.ContextAPIKey, ${pkg.pkg}.APIKey{Key: tok.Token})
		`
          : '';
      return `	run(${JSON.stringify(api)}, ${JSON.stringify(c.operationId)}, urls[${JSON.stringify(api)}], func() (interface{}, *http.Response, error) {
		ctx := ${api}Ctx
		${auth}${callExpression(pkg, api, c)}
	})`;
    });
    return `	${api}Cfg := ${pkg.pkg}.NewConfiguration()
	${api}Cfg.BasePath = urls[${JSON.stringify(api)}]
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

	"github.com/antihax/optional"
${apis.map((a) => `\t${a.pkg.pkg} ${JSON.stringify(a.module)}`).join('\n')}
)

var _ = optional.NewString

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
