"""The PyPI `google-reader` client (Python >= 3.12) against `serve` (Tests/EndToEndTests/
GoogleReaderClientTests.swift): sign-in, subscriptions, unread ids, contents with
enclosures, star, mark-all-as-read, subscribe and unsubscribe. Prints one line per step
and "all passed" at the end; exits 1 on the first step that fails.

usage: google_reader_client.py BASE_URL USER PASSWORD FEED_URL
"""
import sys

import google_reader

READ = "user/-/state/com.google/read"
STARRED = "user/-/state/com.google/starred"
READING_LIST = "user/-/state/com.google/reading-list"


def check(step, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + step + ("" if ok else ": " + str(detail)), flush=True)
    if not ok:
        sys.exit(1)


def main(base, user, password, feed_url):
    client = google_reader.Client(base + "/api/greader")
    auth = client.login(user, password)
    check("sign-in", bool(auth.AccessToken))
    token = client.get_token(auth)
    check("token", bool(token))

    subscriptions = {s.id: s for s in client.list_subscriptions(auth)}
    check("subscriptions", sorted(subscriptions) == ["feed/podcast", "feed/target"], sorted(subscriptions))

    unread = client.get_stream_items_ids(auth, READING_LIST, limit=5, exclude_target=READ)
    check("five unread ids", len(unread.item_refs) == 5, unread)
    check("more unread behind them", bool(unread.continuation), unread.continuation)
    everything = client.get_stream_items_ids(auth, READING_LIST, limit=1000)
    check("every id", len(everything.item_refs) == 24 and not everything.continuation, len(everything.item_refs))

    podcast = client.get_stream_items_ids(auth, "feed/podcast", limit=100)
    ids = [google_reader.get_long_item_id(int(ref.id)) for ref in podcast.item_refs]
    contents = client.get_stream_items_contents(auth, token, ids)
    with_files = [item for item in contents.items if item.enclosure]
    check("contents with enclosures", len(contents.items) == 4 and len(with_files) >= 1,
          [(item.title, item.enclosure) for item in contents.items])
    check("an enclosure's address", with_files[0].enclosure[0].url.startswith("http"), with_files[0].enclosure)

    first = ids[0]
    check("star", client.edit_tags(auth, token, [first], add_tags=[STARRED]))
    starred = client.get_stream_items_ids(auth, STARRED, limit=100)
    check("starred stream", [int(ref.id) for ref in starred.item_refs] == [int(podcast.item_refs[0].id)], starred)

    check("mark all as read", client.mark_all_as_read(auth, token, READING_LIST))
    left = client.get_stream_items_ids(auth, READING_LIST, limit=100, exclude_target=READ)
    check("nothing unread after", left.item_refs == [] and not left.continuation, left)

    added = client.quick_add_subscription(auth, token, feed_url)
    check("subscribe", added.num_results == 1 and added.stream_id.startswith("feed/"), added)
    with_new = sorted(s.id for s in client.list_subscriptions(auth))
    check("subscriptions with it", with_new == sorted(["feed/podcast", "feed/target", added.stream_id]), with_new)
    check("unsubscribe", client.edit_subscription(auth, token, added.stream_id, "unsubscribe"))
    after = sorted(s.id for s in client.list_subscriptions(auth))
    check("subscriptions after", after == ["feed/podcast", "feed/target"], after)
    print("all passed")


if __name__ == "__main__":
    main(*sys.argv[1:5])
