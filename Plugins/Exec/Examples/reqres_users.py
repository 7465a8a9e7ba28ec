#!/usr/bin/env python3
# An aggregate exec source: reqres.in users, one page per run (Plugins/Exec/README.md).
import json, os, urllib.request

page = int(os.environ.get("AGGREGATE_CURSOR", "1"))
base = os.environ.get("AGGREGATE_URL", "https://reqres.in")
request = urllib.request.Request(f"{base}/api/users?page={page}",
                                 headers={"x-api-key": os.environ.get("REQRES_API_KEY", "reqres-free-v1")})
body = json.load(urllib.request.urlopen(request, timeout=30))
for user in body["data"]:
    name = f"{user['first_name']} {user['last_name']}".strip()
    print(json.dumps({"id": user["id"], "kind": "person", "title": name,
                      "summary": user["email"], "image": user["avatar"]}))
if page < body["total_pages"]:
    print(json.dumps({"next": str(page + 1)}))
