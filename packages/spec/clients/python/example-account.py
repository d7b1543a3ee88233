import os

import zone_account

configuration = zone_account.Configuration(host=os.environ["ZONE_API_BASE_URL"])
# The bearer token is set after construction: this Configuration takes no access_token argument.
configuration.access_token = os.environ["ZONE_API_TOKEN"]

with zone_account.ApiClient(configuration) as client:
    balance = zone_account.AccountAndNetworkApi(client).get_balance(customer="hl_1a2b3c4d")
    print(f"balance {balance.balance}, pending {balance.pending_costs}")
