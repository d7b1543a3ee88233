"""Smoke test of the generated Python clients against Prism (run by generators.test.ts).

Usage: PYTHONPATH=<account client>:<manager client> python3 smoke.py ACCOUNT_URL MANAGER_URL
Prints one JSON line per call: {"call", "ok", "result" | "error"}; exits 1 if any call failed.
"""
import json
import sys
import traceback

import zone_account
import zone_manager

account_url, manager_url = sys.argv[1], sys.argv[2]
CUSTOMER, ZONE = "hl_1a2b3c4d", "static_zone"
failed = False


def call(name, fn):
    global failed
    try:
        result = fn()
        if hasattr(result, "to_dict"):
            result = result.to_dict()
        print(json.dumps({"call": name, "ok": True, "result": result}, default=str), flush=True)
    except Exception as e:  # report every call, then fail the run
        failed = True
        detail = getattr(e, "body", None) or traceback.format_exc(limit=3)
        print(json.dumps({"call": name, "ok": False, "error": f"{type(e).__name__}: {e}", "detail": str(detail)}), flush=True)


def account_client(**auth):
    cfg = zone_account.Configuration(host=account_url)
    # Always set: the generated Configuration reads it on every call of the account API but never
    # gives it a value of its own (AttributeError without a bearer token).
    cfg.access_token = auth.get("token")
    if "zone_header" in auth:
        # The generator keys api_key by the security scheme's name.
        cfg.api_key["zoneCredential"] = auth["zone_header"]
    return zone_account.ApiClient(cfg)


bearer = account_client(token="smoke-token")
zone_header = account_client(zone_header=f"service-customer-{CUSTOMER}-zone-{ZONE}-key-smokepass")

call("getBalance (GET, bearer)", lambda: zone_account.AccountAndNetworkApi(bearer).get_balance(customer=CUSTOMER))
call("getZoneStatus (GET, Zone credential header)", lambda: zone_account.ZoneAdministrationApi(zone_header).get_zone_status())
# The JSON-in-query plan is a string parameter of the generated client: its JSON text goes as it is.
call(
    "getAvailableIpCount (JSON-in-query plan)",
    lambda: zone_account.IPInventoryApi(bearer).get_available_ip_count(
        CUSTOMER, ZONE, plan=json.dumps({"ips_type": "shared", "country": "us"}, separators=(",", ":"))
    ),
)
# Maps of lists and of maps (4.3.1 loses their element type when the map is a referenced schema).
call("getZoneWhitelist (map of lists)", lambda: zone_account.ZoneAdministrationApi(bearer).get_zone_whitelist(zones=ZONE, customer=CUSTOMER))
call("listRecentIps (map of lists)", lambda: zone_account.IPInventoryApi(bearer).list_recent_ips(zones=ZONE, customer=CUSTOMER))
call("getCustomerBandwidth (map of maps)", lambda: zone_account.StatisticsApi(bearer).get_customer_bandwidth(customer=CUSTOMER, details=1))
call(
    "removeZoneIps (DELETE with body)",
    lambda: zone_account.IPInventoryApi(bearer).remove_zone_ips(
        zone_account.RemoveZoneIpsRequest(customer=CUSTOMER, zone=ZONE, ips=["1.1.1.1", "1.1.1.2"])
    ),
)

mcfg = zone_manager.Configuration(host=manager_url)
mcfg.api_key["managerToken"] = "smoke-manager-token"
manager = zone_manager.ApiClient(mcfg)
call("getVersion (GET, no credential)", lambda: zone_manager.LifecycleApi(manager).get_version())
call(
    "createProxy (POST with body)",
    lambda: zone_manager.ProxyPortsApi(manager).create_proxy(
        zone_manager.ProxyPortRequest(proxy=zone_manager.ProxyPort(port=24000, zone=ZONE))
    ),
)
# The client asks for JSON alone whenever an operation lists JSON among its responses (here only the
# errors), so a text success needs the Accept header widened; default headers override it.
text = zone_manager.ApiClient(mcfg)
text.set_default_header("Accept", "text/html, application/json")
call("addWhitelistIp (manager token, text body)", lambda: zone_manager.UsersAndAccessApi(text).add_whitelist_ip(zone_manager.IpRequest(ip="10.0.0.1")))

sys.exit(1 if failed else 0)
