import os

import zone_manager

configuration = zone_manager.Configuration(host=os.environ.get("ZONE_API_MANAGER_URL", "http://127.0.0.1:22999"))

with zone_manager.ApiClient(configuration) as client:
    info = zone_manager.LifecycleApi(client).get_version()
    print(f"manager {info.version}")
