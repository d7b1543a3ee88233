// Smoke test of the generated Go clients against Prism (built and run by generators.test.ts).
// Usage: smoke ACCOUNT_URL MANAGER_URL. Prints one JSON line per call: {"call", "ok", "result" | "error"};
// exits 1 if any call failed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	zoneaccount "github.com/zone-api/account-go"
	zonemanager "github.com/zone-api/manager-go"
)

const customer, zone = "hl_1a2b3c4d", "static_zone"

var failed bool

func call(name string, fn func() (interface{}, *http.Response, error)) {
	result, res, err := fn()
	line := map[string]interface{}{"call": name, "ok": err == nil}
	if res != nil {
		line["status"] = res.StatusCode
	}
	if err != nil {
		failed = true
		line["error"] = err.Error()
		if apiErr, ok := err.(interface{ Body() []byte }); ok {
			line["detail"] = string(apiErr.Body())
		}
	} else {
		line["result"] = result
	}
	out, _ := json.Marshal(line)
	fmt.Println(string(out))
}

func main() {
	accountURL, managerURL := os.Args[1], os.Args[2]

	acfg := zoneaccount.NewConfiguration()
	acfg.Servers = zoneaccount.ServerConfigurations{{URL: accountURL}}
	account := zoneaccount.NewAPIClient(acfg)
	bearer := context.WithValue(context.Background(), zoneaccount.ContextAccessToken, "smoke-token")
	zoneHeader := context.WithValue(context.Background(), zoneaccount.ContextAPIKeys, map[string]zoneaccount.APIKey{
		"zoneCredential": {Key: fmt.Sprintf("service-customer-%s-zone-%s-key-smokepass", customer, zone)},
	})

	call("getBalance (GET, bearer)", func() (interface{}, *http.Response, error) {
		return account.AccountAndNetworkApi.GetBalance(bearer).Customer(customer).Execute()
	})
	call("getZoneStatus (GET, Zone credential header)", func() (interface{}, *http.Response, error) {
		return account.ZoneAdministrationApi.GetZoneStatus(zoneHeader).Execute()
	})
	// The JSON-in-query plan is a string parameter of the generated client: its JSON text goes as it is.
	call("getAvailableIpCount (JSON-in-query plan)", func() (interface{}, *http.Response, error) {
		plan := `{"ips_type":"shared","country":"us"}`
		return account.IPInventoryApi.GetAvailableIpCount(bearer).Customer(customer).Zone(zone).Plan(plan).Execute()
	})
	call("getZoneWhitelist (map of lists)", func() (interface{}, *http.Response, error) {
		return account.ZoneAdministrationApi.GetZoneWhitelist(bearer).Zones(zone).Customer(customer).Execute()
	})
	call("listRecentIps (map of lists)", func() (interface{}, *http.Response, error) {
		return account.IPInventoryApi.ListRecentIps(bearer).Zones(zone).Customer(customer).Execute()
	})
	call("getCustomerBandwidth (map of maps)", func() (interface{}, *http.Response, error) {
		return account.StatisticsApi.GetCustomerBandwidth(bearer).Customer(customer).Details(1).Execute()
	})
	call("removeZoneIps (DELETE with body)", func() (interface{}, *http.Response, error) {
		body := *zoneaccount.NewRemoveZoneIpsRequest([]string{"1.1.1.1", "1.1.1.2"})
		body.SetCustomer(customer)
		body.SetZone(zone)
		return account.IPInventoryApi.RemoveZoneIps(bearer).RemoveZoneIpsRequest(body).Execute()
	})

	mcfg := zonemanager.NewConfiguration()
	mcfg.Servers = zonemanager.ServerConfigurations{{URL: managerURL}}
	manager := zonemanager.NewAPIClient(mcfg)
	token := context.WithValue(context.Background(), zonemanager.ContextAPIKeys, map[string]zonemanager.APIKey{"managerToken": {Key: "smoke-manager-token"}})
	call("getVersion (GET, no credential)", func() (interface{}, *http.Response, error) {
		return manager.LifecycleApi.GetVersion(context.Background()).Execute()
	})
	call("createProxy (POST with body)", func() (interface{}, *http.Response, error) {
		proxy := zonemanager.NewProxyPort()
		proxy.SetPort(24000)
		proxy.SetZone(zone)
		return manager.ProxyPortsApi.CreateProxy(context.Background()).ProxyPortRequest(*zonemanager.NewProxyPortRequest(*proxy)).Execute()
	})
	// The client asks for JSON alone whenever an operation lists JSON among its responses (here only the
	// errors); a second Accept value lets the text/html success through.
	tcfg := zonemanager.NewConfiguration()
	tcfg.Servers = zonemanager.ServerConfigurations{{URL: managerURL}}
	tcfg.AddDefaultHeader("Accept", "text/html")
	text := zonemanager.NewAPIClient(tcfg)
	call("addWhitelistIp (manager token, text body)", func() (interface{}, *http.Response, error) {
		return text.UsersAndAccessApi.AddWhitelistIp(token).IpRequest(*zonemanager.NewIpRequest("10.0.0.1")).Execute()
	})

	if failed {
		os.Exit(1)
	}
}
