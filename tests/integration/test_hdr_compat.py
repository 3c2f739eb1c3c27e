"""hammer's histogram against the real HdrHistogram (Java 2.2.2).

Records with known distributions go through `hammer stats --reducer`; the histogram column is
decoded by HdrHistogram itself (integrations/jvm/hdr-check) and must give the same counts and
percentiles as hammer's own columns, the same percentile-distribution text as `--hdr`, and the
same bytes as HdrHistogram's encoder. The other way round, histograms encoded by HdrHistogram
are fed to `hammer stats` inside partial records.

Needs $HAMMER (the hammer binary) and the hdr-check jar (`make deps-test` builds it).
"""
import math
import random
import subprocess
from pathlib import Path

import pytest

import prerequisites
from harness import HAMMER, ROOT

TOOL_DIR = ROOT / "integrations" / "jvm" / "hdr-check"
JAR = TOOL_DIR / "target" / "hdr-check.jar"
PERCENTILES = (50.0, 90.0, 99.0, 99.9)
HIGHEST = 3_600_000_000


@pytest.fixture(scope="session")
def hdr_check():
    """Runs HdrHistogram's side (integrations/jvm/hdr-check, built by `make deps-test`)."""
    prerequisites.require_built(TOOL_DIR, JAR, "hdr")

    def run(args, stdin):
        java = str(Path(prerequisites.JAVA17_HOME) / "bin" / "java")
        return subprocess.run([java, "-jar", str(JAR), *args], input=stdin, text=True,
                              capture_output=True, check=True).stdout
    return run


def seconds(micros):
    return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


def micros_of(text):
    whole, fraction = text.split(".")
    return int(whole) * 1_000_000 + int(fraction)


def ruby_float(micros):
    """What the seed's Ruby mapper would print for a time of `micros` µs."""
    value = micros / 1e6
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa if '.' in mantissa else mantissa + '.0'}e{int(exponent):+03d}"
    return text


def distributions(rng):
    return {
        "http://127.0.0.1/lognormal": [int(rng.lognormvariate(9, 1.5)) for _ in range(20000)],
        "http://127.0.0.1/wide": [int(math.exp(rng.uniform(0, math.log(3e9)))) for _ in range(5000)],
        "http://127.0.0.1/constant": [12345] * 1000,
        "http://127.0.0.1/tiny": [rng.randrange(0, 50) for _ in range(3000)],
        "http://127.0.0.1/saturating": [rng.randrange(1000, 5_000_000_000) for _ in range(500)],
        "http://127.0.0.1/one": [777],
    }


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = random.Random(20240601)
    values = distributions(rng)
    failures = {}
    lines = []
    for key, micros in values.items():
        for m in micros:
            if rng.random() < 0.3 and m < 10**9:
                lines.append(f"{key}\t{ruby_float(m)}")  # seed mapper format, Ruby floats
            else:
                lines.append(f"{key}\t{seconds(m)}")
        failures[key] = rng.randrange(0, 5)
        lines.extend(f"{key}\t" for _ in range(failures[key]))
    failures["http://127.0.0.1/failures-only"] = 7
    lines.extend(["http://127.0.0.1/failures-only\t"] * 7)
    assert any(failures[key] == 0 for key in values) and any(failures.values())
    rng.shuffle(lines)  # unsorted: the reducer must notice and aggregate in memory
    path = tmp_path_factory.mktemp("records") / "records.tsv"
    path.write_text("\n".join(lines) + "\n")
    return path, values, failures


@pytest.fixture(scope="module")
def reduced(data):
    path, _, _ = data
    out = subprocess.run([HAMMER, "stats", "--reducer", str(path)], capture_output=True,
                         text=True, check=True)
    assert out.stderr == ""
    rows = {}
    for line in out.stdout.splitlines():
        fields = line.split("\t")
        assert len(fields) == 12, line
        rows[fields[0]] = fields
    return rows


def exact_percentile(sorted_values, percentile):
    """The ceil(p% * n)-th smallest value (HdrHistogram's definition, before bucketing)."""
    rank = max(1, math.ceil(percentile / 100.0 * len(sorted_values) - 1e-9))
    return sorted_values[rank - 1]


def test_java_decodes_hammer_histograms_to_the_same_figures(reduced, data, hdr_check):
    _, values, failures = data
    keys = sorted(reduced)
    assert keys == sorted(failures)
    decoded = hdr_check(["decode"], "".join(reduced[k][11] + "\n" for k in keys)).splitlines()
    assert len(decoded) == len(keys)
    for key, java_line in zip(keys, decoded):
        total, java_min, java_max, *java_percentiles = (int(x) for x in java_line.split())
        row = reduced[key]
        count = int(row[6])
        assert total == count == len(values.get(key, [])), key
        assert int(row[5]) == failures[key], key  # the errors column
        if count == 0:
            assert row[2:5] == ["", "", ""] and row[7:11] == ["", "", "", ""]
            assert (java_min, java_max, java_percentiles) == (0, 0, [0, 0, 0, 0])
            continue
        ours = [micros_of(x) for x in row[7:11]]
        # min/max columns are exact; Java's are the edges of their buckets. Java's percentile is
        # its bucket's highest value; hammer's is held within the exact max (as in every report).
        exact_min, exact_max = micros_of(row[4]), micros_of(row[3])
        assert ours == [min(j, exact_max) for j in java_percentiles], key
        assert exact_min == min(values[key]) and exact_max == max(values[key])
        clamped_min, clamped_max = min(exact_min, HIGHEST), min(exact_max, HIGHEST)
        assert java_min <= clamped_min <= java_min + java_min / 1024
        assert clamped_max <= java_max <= clamped_max + clamped_max / 1024 + 1
        # Every percentile within 0.1% of the exact one (values above the range are clamped).
        sorted_values = sorted(min(v, HIGHEST) for v in values[key])
        for p, got in zip(PERCENTILES, ours):
            expected = exact_percentile(sorted_values, p)
            assert expected <= got <= expected + expected / 1024 + 1, (key, p, got, expected)
        assert micros_of(row[1]) == sum(values[key])


def test_percentile_distribution_text_matches_java(reduced, data, hdr_check):
    path, _, _ = data
    for key, row in reduced.items():
        ours = subprocess.run([HAMMER, "stats", "--hdr", "--key", key, str(path)],
                              capture_output=True, text=True, check=True).stdout
        theirs = hdr_check(["distribution"], row[11] + "\n")
        assert ours == theirs, key


def test_hammer_encoding_is_byte_identical_to_java(reduced, data, hdr_check):
    _, values, _ = data
    for key, micros in values.items():
        java = hdr_check(["encode"], "".join(f"{min(m, HIGHEST)}\n" for m in micros)).strip()
        assert reduced[key][11] == java, key


def test_java_encoded_histograms_in_partials(hdr_check, tmp_path):
    rng = random.Random(7)
    first = [int(rng.lognormvariate(8, 2)) for _ in range(4000)]
    second = [int(rng.lognormvariate(10, 1)) for _ in range(3000)]
    raw = [rng.randrange(1, 10**6) for _ in range(500)]

    def partial(key, micros, errors=0):
        encoded = hdr_check(["encode"], "".join(f"{m}\n" for m in micros)).strip()
        return (f"{key}\t#hp1 {len(micros)} {errors} {sum(micros)} {min(micros)} {max(micros)}"
                f" - {encoded}"), encoded

    line_a, encoded_a = partial("k", first, errors=2)
    line_b, _ = partial("k", second)
    lines = [line_a, line_b] + [f"k\t{seconds(m)}" for m in raw] + ["k\t"]
    random.Random(3).shuffle(lines)
    path = tmp_path / "partials.tsv"
    path.write_text("\n".join(lines) + "\n")
    out = subprocess.run([HAMMER, "stats", "--reducer", str(path)], capture_output=True,
                         text=True, check=True)
    assert out.stderr == ""
    (row,) = [line.split("\t") for line in out.stdout.splitlines()]
    everything = first + second + raw
    assert int(row[6]) == len(everything)
    assert int(row[5]) == 3
    assert micros_of(row[1]) == sum(everything)
    assert (micros_of(row[4]), micros_of(row[3])) == (min(everything), max(everything))
    # The merged histogram is what HdrHistogram itself builds from all the values.
    java_all = hdr_check(["encode"], "".join(f"{m}\n" for m in everything)).strip()
    assert row[11] == java_all
    java_figures = [int(x) for x in hdr_check(["decode"], java_all + "\n").split()]
    assert [micros_of(x) for x in row[7:11]] == java_figures[3:]

    # A partial of Java's alone comes back out with Java's bytes.
    single = tmp_path / "single.tsv"
    single.write_text(line_a + "\n")
    out = subprocess.run([HAMMER, "stats", "--reducer", str(single)], capture_output=True,
                         text=True, check=True)
    assert out.stdout.split("\t")[11].strip() == encoded_a


def test_corrupt_partials_are_counted_not_fatal(hdr_check, tmp_path):
    encoded = hdr_check(["encode"], "5\n").strip()
    path = tmp_path / "bad.tsv"
    path.write_text(f"k\t#hp1 1 0 5 5 5 - {encoded[:-8]}\n"      # truncated histogram
                    f"k\t#hp1 2 0 5 5 5 - {encoded}\n"           # count disagrees
                    f"k\t#hp1 1 0 5 5 5 - {encoded}\n")
    out = subprocess.run([HAMMER, "stats", "--reducer", str(path)], capture_output=True,
                         text=True, check=True)
    assert out.stdout.split("\t")[6] == "1"
    assert "reporter:counter:stats,malformed,2" in out.stderr
