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

	"github.com/antihax/optional"
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
	acfg.BasePath = accountURL
	account := zoneaccount.NewAPIClient(acfg)
	bearer := context.WithValue(context.Background(), zoneaccount.ContextAccessToken, "smoke-token")
	zoneHeader := context.WithValue(context.Background(), zoneaccount.ContextAPIKey,
		zoneaccount.APIKey{Key: fmt.Sprintf("service-customer-%s-zone-%s-key-smokepass", customer, zone)})

	call("getBalance (GET, bearer)", func() (interface{}, *http.Response, error) {
		return account.AccountAndNetworkApi.GetBalance(bearer, &zoneaccount.GetBalanceOpts{Customer: optional.NewString(customer)})
	})
	call("getZoneStatus (GET, Zone credential header)", func() (interface{}, *http.Response, error) {
		return account.ZoneAdministrationApi.GetZoneStatus(zoneHeader, nil)
	})
	// The JSON-in-query plan is a string parameter of the generated client: its JSON text goes as it is.
	call("getAvailableIpCount (JSON-in-query plan)", func() (interface{}, *http.Response, error) {
		plan := `{"ips_type":"shared","country":"us"}`
		return account.IPInventoryApi.GetAvailableIpCount(bearer, customer, zone, &zoneaccount.GetAvailableIpCountOpts{Plan: optional.NewString(plan)})
	})
	call("getZoneWhitelist (map of lists)", func() (interface{}, *http.Response, error) {
		return account.ZoneAdministrationApi.GetZoneWhitelist(bearer, zone, &zoneaccount.GetZoneWhitelistOpts{Customer: optional.NewString(customer)})
	})
	call("listRecentIps (map of lists)", func() (interface{}, *http.Response, error) {
		return account.IPInventoryApi.ListRecentIps(bearer, zone, &zoneaccount.ListRecentIpsOpts{Customer: optional.NewString(customer)})
	})
	call("getCustomerBandwidth (map of maps)", func() (interface{}, *http.Response, error) {
		return account.StatisticsApi.GetCustomerBandwidth(bearer, &zoneaccount.GetCustomerBandwidthOpts{Customer: optional.NewString(customer), Details: optional.NewInt32(1)})
	})
	call("removeZoneIps (DELETE with body)", func() (interface{}, *http.Response, error) {
		return account.IPInventoryApi.RemoveZoneIps(bearer, zoneaccount.RemoveZoneIpsRequest{Customer: customer, Zone: zone, Ips: []string{"1.1.1.1", "1.1.1.2"}})
	})

	mcfg := zonemanager.NewConfiguration()
	mcfg.BasePath = managerURL
	manager := zonemanager.NewAPIClient(mcfg)
	token := context.WithValue(context.Background(), zonemanager.ContextAPIKey, zonemanager.APIKey{Key: "smoke-manager-token"})
	call("getVersion (GET, no credential)", func() (interface{}, *http.Response, error) {
		return manager.LifecycleApi.GetVersion(context.Background())
	})
	call("createProxy (POST with body)", func() (interface{}, *http.Response, error) {
		return manager.ProxyPortsApi.CreateProxy(context.Background(), zonemanager.ProxyPortRequest{Proxy: zonemanager.ProxyPort{Port: 24000, Zone: zone}})
	})
	// The client asks for JSON alone whenever an operation lists JSON among its responses (here only the
	// errors); a second Accept value lets the text/html success through.
	tcfg := zonemanager.NewConfiguration()
	tcfg.BasePath = managerURL
	tcfg.AddDefaultHeader("Accept", "text/html")
	text := zonemanager.NewAPIClient(tcfg)
	call("addWhitelistIp (manager token, text body)", func() (interface{}, *http.Response, error) {
		return text.UsersAndAccessApi.AddWhitelistIp(token, zonemanager.IpRequest{Ip: "10.0.0.1"})
	})

	if failed {
		os.Exit(1)
	}
}
