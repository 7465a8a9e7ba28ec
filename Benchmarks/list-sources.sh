#!/usr/bin/env bash
# Prints the benchmark's Sources.yml: the four list sources of a fixture server at BASE, with
# budgets that let every card through.   bash Benchmarks/list-sources.sh BASE > Sources.yml
set -euo pipefail
base=$1
cat <<YAML
sources:
  - {id: target, plugin: target-deals, url: $base/target, max_items: 1000000, max_body: 1GiB, fallback: none}
  - {id: users, plugin: reqres, url: $base/reqres, max_items: 1000000, max_pages: 10000, max_body: 1GiB, fallback: none}
  - id: dishwashers
    plugin: dishwashers
    url: $base/dishwasher/api/search-valid-response.json
    max_items: 1000000
    max_body: 1GiB
    fallback: none
    options: {detail_url: $base/dishwasher/api/product-search-response.json, image_base: $base/dishwasher/images/}
  - {id: cabify, plugin: cabify, url: $base/cabify/Products.json, max_items: 1000000, max_body: 1GiB, fallback: none}
YAML
