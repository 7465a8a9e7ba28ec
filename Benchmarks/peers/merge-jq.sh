#!/usr/bin/env bash
# The benchmark job as a curl + jq pipeline: every card of the four list sources at
# fixture-server $1, merged and sorted by price (cards without a price last), one per line.
set -euo pipefail
base=$1
{
  curl -sf "$base/target/deals" |
    jq -c '.products[] | {id: "target:\(.id)", title, price: ((.sale_price // .regular_price).amount_in_cents / 100)}'
  page=1
  while :; do
    body=$(curl -sf -H 'x-api-key: reqres-free-v1' "$base/reqres/api/users?page=$page")
    jq -c '.data[] | {id: "users:\(.id)", title: "\(.first_name) \(.last_name)", price: null}' <<<"$body"
    [ "$(jq '.page < .total_pages' <<<"$body")" = true ] || break
    page=$((page + 1))
  done
  curl -sf "$base/dishwasher/api/search-valid-response.json" |
    jq -c '.products[] | {id: "dishwashers:\(.productId)", title, price: (.price.now | tonumber? // null)}'
  curl -sf "$base/cabify/Products.json" |
    jq -c '.products[] | {id: "cabify:\(.code)", title: .name, price}'
} | jq -s -c 'sort_by(.price == null, .price)[]'
