"""Helpers for the shard-aware bulk tests and benchmark: test data, cluster evidence.

Standard library only, so bench/bulk_routing.py can import it too.

The evidence that a bulk was shard-aware comes from the cluster itself, not from hammer:
OpenSearch (and Elasticsearch >= 7.9) keep per-node indexing-pressure totals
(`GET _nodes/stats/indexing_pressure`, memory.total):
  coordinating_in_bytes                       bytes of bulk requests this node received from a
                                              client and coordinated
  primary_in_bytes                            bytes of shard requests executed here as primary
  combined_coordinating_and_primary_in_bytes  coordinating + primary bytes that did NOT come
                                              from this node's own coordination
A primary operation local to the coordinating node is accounted with
markPrimaryOperationLocalToCoordinatingNodeStarted, which adds to primary_in_bytes but not to
the combined figure (those bytes were already counted as coordinating). So, summed over nodes,
  forwarded primary bytes = combined - coordinating
  local fraction          = 1 - forwarded / primary
which is exactly "shard requests executed on the node that received the bulk".
"""
import json
import random
import urllib.request

# Characters for ids and routing values: ASCII, JSON escapes, Latin/Greek/Cyrillic/CJK, and
# emoji outside the BMP (UTF-16 surrogate pairs, the case a byte-widening hash gets wrong).
_ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/",
    "\"\\\t\n\u0001 ",
    "äöüßéèçñÅØæ",
    "αβγδεζηθλμπσωΓΔΘΛΞΠΣΦΨΩ",
    "жзийклмнопрстуфхцчшщыэюя",
    "漢字仮名한국어中文日本語",
    "😀😃🙂🙃🦄🐝🍕🚀🎉🇫🇷👍🏽\u200d",
]


def random_key(rng, max_len=24):
    """A random non-empty string mixing the alphabets above (never a lone surrogate)."""
    length = rng.randint(1, max_len)
    alphabet_weights = [6, 1, 1, 1, 1, 1, 2]
    out = []
    for _ in range(length):
        alphabet = rng.choices(_ALPHABETS, weights=alphabet_weights)[0]
        out.append(rng.choice(alphabet))
    return "".join(out)


def dumps(obj, rng=None):
    """json.dumps, with ASCII escaping (\\uXXXX, surrogate pairs) on about half the lines."""
    ensure_ascii = rng.random() < 0.5 if rng else False
    return json.dumps(obj, ensure_ascii=ensure_ascii, separators=(",", ":"))


def routing_docs(n, seed, with_routing="half"):
    """n (id, routing or None) pairs with distinct ids; routing on half, all, or none."""
    rng = random.Random(seed)
    seen, docs = set(), []
    while len(docs) < n:
        doc_id = random_key(rng)
        if doc_id in seen:
            continue
        seen.add(doc_id)
        routing = None
        if with_routing == "all" or (with_routing == "half" and rng.random() < 0.5):
            routing = random_key(rng, 12)
        docs.append((doc_id, routing))
    return docs


def bulk_lines(docs, seed=0, source=lambda i: {"n": i}):
    """NDJSON action+source text for (id, routing) pairs."""
    rng = random.Random(seed)
    lines = []
    for i, (doc_id, routing) in enumerate(docs):
        meta = {"_id": doc_id}
        if routing is not None:
            meta["routing"] = routing
        lines.append(dumps({"index": meta}, rng))
        lines.append(dumps(source(i), rng))
    return "\n".join(lines) + "\n"


def synthetic_corpus(path, n, seed=7):
    """Writes n action+source pairs with ASCII ids doc-<i> and ~200-byte log-like sources;
    returns the number of bytes written."""
    rng = random.Random(seed)
    words = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit",
             "sed", "do", "eiusmod", "tempor", "incididunt", "labore", "magna", "aliqua"]
    total = 0
    with open(path, "w") as f:
        for i in range(n):
            action = '{"index":{"_id":"doc-%d"}}\n' % i
            source = json.dumps({
                "n": i, "user": "u%d" % rng.randrange(10000),
                "level": rng.choice(["INFO", "WARN", "ERROR", "DEBUG"]),
                "latency_ms": round(rng.expovariate(1 / 40.0), 3),
                "message": " ".join(rng.choice(words) for _ in range(18)),
            }, separators=(",", ":")) + "\n"
            f.write(action)
            f.write(source)
            total += len(action) + len(source)
    return total


def node_counters(base_url):
    """{node name: {...}} indexing-pressure totals and transport counters of every node."""
    with urllib.request.urlopen(base_url + "/_nodes/stats/indexing_pressure,transport",
                                timeout=30) as r:
        stats = json.load(r)
    out = {}
    for node in stats["nodes"].values():
        total = node["indexing_pressure"]["memory"]["total"]
        transport = node["transport"]
        out[node["name"]] = {
            "coordinating": total["coordinating_in_bytes"],
            "primary": total["primary_in_bytes"],
            "combined": total["combined_coordinating_and_primary_in_bytes"],
            "replica": total["replica_in_bytes"],
            "tx_bytes": transport["tx_size_in_bytes"],
            "rx_bytes": transport["rx_size_in_bytes"],
        }
    return out


def counter_delta(before, after):
    """Per-node and summed ("total") differences of two node_counters() snapshots."""
    delta = {}
    total = {}
    for name, values in after.items():
        d = {k: v - before.get(name, {}).get(k, 0) for k, v in values.items()}
        delta[name] = d
        for k, v in d.items():
            total[k] = total.get(k, 0) + v
    delta["total"] = total
    return delta


def locality(delta):
    """(forwarded primary bytes, primary bytes, local fraction) of a counter_delta()."""
    total = delta["total"]
    forwarded = total["combined"] - total["coordinating"]
    primary = total["primary"]
    return forwarded, primary, (1.0 - forwarded / primary) if primary else 0.0
