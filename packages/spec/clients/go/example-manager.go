package main

import (
	"context"
	"fmt"
	"os"

	zonemanager "github.com/zone-api/manager-go"
)

func main() {
	url := os.Getenv("ZONE_API_MANAGER_URL")
	if url == "" {
		url = "http://127.0.0.1:22999"
	}
	cfg := zonemanager.NewConfiguration()
	cfg.Servers = zonemanager.ServerConfigurations{{URL: url}}
	client := zonemanager.NewAPIClient(cfg)

	info, _, err := client.LifecycleApi.GetVersion(context.Background()).Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "getVersion:", err)
		os.Exit(1)
	}
	fmt.Printf("manager %s\n", info.GetVersion())
}
