package main

import (
	"context"
	"fmt"
	"os"

	zoneaccount "github.com/zone-api/account-go"
)

func main() {
	cfg := zoneaccount.NewConfiguration()
	cfg.Servers = zoneaccount.ServerConfigurations{{URL: os.Getenv("ZONE_API_BASE_URL")}}
	client := zoneaccount.NewAPIClient(cfg)
	ctx := context.WithValue(context.Background(), zoneaccount.ContextAccessToken, os.Getenv("ZONE_API_TOKEN"))

	balance, _, err := client.AccountAndNetworkApi.GetBalance(ctx).Customer("hl_1a2b3c4d").Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "getBalance:", err)
		os.Exit(1)
	}
	fmt.Printf("balance %v, pending %v\n", balance.GetBalance(), balance.GetPendingCosts())
}
