"""Calls every operation of both APIs through the generated Python clients (run by every-operation.test.ts).

Usage: PYTHONPATH=<account client>:<manager client> python3 every_operation.py CALLS_JSON
CALLS_JSON lists, per API, its base URL, bearer token and one call per operation of the bundle, with
the arguments taken from the spec's examples. Before each call the sandbox is put back to its seed, so
that no call depends on another. Prints one JSON line per call:
{"api", "operationId", "ok", "status", "type" (the Python type of the result), "result"}, or "ok": false and "error".
"""
import json
import keyword
import re
import sys
import traceback
import urllib.request

import zone_account
import zone_manager

PACKAGES = {"account": zone_account, "manager": zone_manager}


def snake(name):
    """The generator's method and argument names: camelCase to snake_case."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)).lower()


def param_name(name):
    """The generator's argument name of a parameter: `status.code` -> status_code, `from` -> _from."""
    n = snake(re.sub(r"\W", "_", name))
    return f"_{n}" if keyword.iskeyword(n) else n


def reset(base_url):
    req = urllib.request.Request(f"{base_url}/__sandbox/reset", data=b"{}", headers={"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as res:
        res.read()


class Raw:
    """What ApiClient.deserialize reads: a response whose data is the JSON text."""

    def __init__(self, value):
        self.data = json.dumps(value)


def method_of(pkg, api_client, operation_id):
    """The generated method of an operation, looked up on every API class of the package."""
    name = snake(operation_id)
    for cls_name in dir(pkg):
        cls = getattr(pkg, cls_name)
        if cls_name.endswith("Api") and isinstance(cls, type) and hasattr(cls, name):
            return getattr(cls(api_client), name)
    raise LookupError(f"no method {name} in {pkg.__name__}")


def with_http_info(method):
    """The same call returning (result, status, headers): the plain method returns the result alone."""
    return getattr(method.__self__, f"{method.__name__}_with_http_info")


def declared_type(method, arg):
    """The type the generated docstring gives an argument (a model class name for the body): `:type arg: T`."""
    m = re.search(r":type " + re.escape(arg) + r": (\S+)", method.__doc__ or "")
    return m.group(1) if m else "object"


def argument(method, name, value):
    """A value for a `str` argument is passed as its JSON text (a `true` flag, a JSON query value)."""
    return value if isinstance(value, str) or declared_type(method, name) != "str" else json.dumps(value)


def client(pkg, api, api_key=None):
    cfg = pkg.Configuration(host=api["url"])
    if api.get("bearer"):
        cfg.access_token = api["bearer"]
    if api_key:
        cfg.api_key[api_key[0]] = api_key[1]
    return pkg.ApiClient(cfg)


def call(api_name, api, c):
    pkg = PACKAGES[api_name]
    reset(api["url"])
    api_key = None
    if c.get("credential"):
        # The only API key of the bundles is the manager token, which getNewToken issues (the scheme's description says so).
        # The generator keys api_key by the security scheme's name (`managerToken`).
        api_key = (c["credential"]["scheme"], method_of(pkg, client(pkg, api), "getNewToken")().token)
    api_client = client(pkg, api, api_key)
    method = method_of(pkg, api_client, c["operationId"])
    code = method.__func__.__code__
    positional = list(code.co_varnames[1 : code.co_argcount])
    args, kwargs = [], {}
    by_name = {param_name(p["name"]): p["value"] for p in c["params"]}
    for name in positional:
        if name in by_name:
            args.append(argument(method, name, by_name.pop(name)))
        elif "body" in c:
            args.append(api_client.deserialize(Raw(c["body"]), declared_type(method, name)))
        else:
            raise LookupError(f"no value for argument {name}")
    kwargs.update({name: argument(method, name, value) for name, value in by_name.items()})
    return with_http_info(method)(*args, **kwargs)


def main():
    with open(sys.argv[1], encoding="utf8") as f:
        spec = json.load(f)
    failed = 0
    for api_name, api in spec.items():
        for c in api["calls"]:
            line = {"api": api_name, "operationId": c["operationId"]}
            try:
                result, status, _headers = call(api_name, api, c)
                line.update(ok=True, status=status, type=type(result).__name__)
                line["result"] = result.to_dict() if hasattr(result, "to_dict") else result
            except Exception as e:  # report every call, then fail the run
                failed += 1
                detail = getattr(e, "body", None) or traceback.format_exc(limit=4)
                line.update(ok=False, error=f"{type(e).__name__}: {e}"[:2000], detail=str(detail)[:2000])
            print(json.dumps(line, default=str), flush=True)
    sys.exit(1 if failed else 0)


main()
