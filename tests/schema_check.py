#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The suite's documents against docs/schema (ctest schema/suite).

usage: schema_check.py SCHEMA_DIR DOCS_DIR

DOCS_DIR holds one directory per test (what REPLAYQ_TEST_JSON_DIR named
for it), each with the <pid>.docs files its processes wrote
(core/base/rq_testhook.h): every job text they parsed, with the verdict
of replayq's parser, and every result they emitted (and the "maintain"
member of one that `replayq maintain --format=json` prints). With Debian's
python3-jsonschema (Draft 2020-12):
  - every result must validate against result.schema.json (a "maintain"
    record against its "maintain" property);
  - every job replayq accepted must validate against job.schema.json;
  - every job replayq refused must fail it too, unless it was refused for
    a reason a JSON Schema cannot say (NOT_SCHEMA below: not JSON as
    JSON Schema sees it, sizes in bytes, git's own rules for revisions).
Prints the offending documents with the test that made them; exit 1 if
there is any, or if a record is cut.
"""
import collections
import glob
import json
import os
import re
import sys

try:
    from jsonschema import Draft202012Validator, RefResolver
except ImportError:
    sys.exit("Debian's python3-jsonschema is needed (deploy/install-deps)")

# Refusals a schema cannot express, by the parser's error message: the
# text is not a JSON document (or not one as JSON Schema reads it: a
# name twice, a NUL in a string, an integer past 64 bits, which jansson
# refuses and Python's json takes), sizes in bytes where the schema
# counts characters, and what only git can judge.
NOT_SCHEMA = [
    (r"^job is not valid JSON", "not JSON as jansson reads it"),
    (r"^job must be a JSON object", "not an object"),
    (r"^job is larger than|is longer than \d+ bytes|is empty or too long|missing or too long",
     "a size in bytes"),
    (r"must be an integer$", "1.0, which JSON Schema takes for 1"),
    (r"is not a revision-walk option replayq takes", "the revision-walk options and their values"),
    (r"is in the train twice", "two cars of one name"),
    (r"^the cars hold more than", "the revisions of all the cars together"),
]


def records(path):
    """(kind, verdict, text bytes, note, error) of each record of a file."""
    data = open(path, "rb").read()
    i = 0
    while i < len(data):
        nl = data.find(b"\n", i)
        try:
            kind, verdict, n, m = data[i:nl].decode().split(" ")
            n, m = int(n), int(m)
        except ValueError:
            yield None, None, b"", "", "a record header that does not read: %r" % data[i : i + 80]
            return
        text = data[nl + 1 : nl + 1 + n]
        note = data[nl + 1 + n : nl + 1 + n + m].decode("utf-8", "replace")
        if data[nl + 1 + n + m : nl + 2 + n + m] != b"\n":
            yield kind, verdict, text, note, "a record cut short"
            return
        yield kind, verdict, text, note, None
        i = nl + 2 + n + m


def no_dups(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("the name %r twice" % k)
        d[k] = v
    return d


def load(text):
    """The JSON value of text, or raise ValueError."""
    return json.loads(text.decode("utf-8"), object_pairs_hook=no_dups)


def short(text, n=400):
    s = text.decode("utf-8", "backslashreplace")
    return s if len(s) <= n else s[:n] + "...(%d bytes)" % len(text)


def why_not_schema(note):
    for pat, why in NOT_SCHEMA:
        if re.search(pat, note):
            return why
    return None


def check(jv, rvs, kind, verdict, text, note, counts):
    """The problem with one document (None: none)."""
    try:
        doc = load(text)
    except (ValueError, UnicodeDecodeError) as e:
        doc, bad_json = None, str(e)
    if kind in rvs:
        rv = rvs[kind]
        counts[kind] += 1
        if doc is None:
            return "a result that is not JSON (%s)" % bad_json
        errs = sorted(rv.iter_errors(doc), key=lambda e: list(e.absolute_path))
        return "; ".join("%s at %s" % (e.message[:200], list(e.absolute_path)) for e in errs[:3]) or None
    if kind != "job":
        return "a record of unknown kind %r" % kind
    if verdict == "ok":
        counts["job accepted"] += 1
        if doc is None:
            return "replayq accepted a job that is not JSON (%s)" % bad_json
        errs = sorted(jv.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errs:
            return "replayq accepted it, the schema refuses it: " + "; ".join(
                "%s at %s" % (e.message[:200], list(e.absolute_path)) for e in errs[:3])
        return None
    counts["job refused"] += 1
    if doc is None:
        counts["job refused, not JSON"] += 1
        return None
    if not jv.is_valid(doc):
        counts["job refused by both"] += 1
        return None
    why = why_not_schema(note)
    if why:
        counts["job refused, not for a schema (%s)" % why] += 1
        return None
    return "replayq refused it (%s: %s), the schema takes it" % (verdict, note)


def main():
    sd, root = sys.argv[1], sys.argv[2]
    schemas = []
    for name in ("job.schema.json", "result.schema.json"):
        s = json.load(open(os.path.join(sd, name)))
        Draft202012Validator.check_schema(s)
        if s.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            sys.exit("%s: not a draft 2020-12 schema" % name)
        schemas.append(Draft202012Validator(s))
    jv, rv = schemas
    # a result, and the "maintain" member of one (replayq maintain --format=json)
    res = json.load(open(os.path.join(sd, "result.schema.json")))
    rvs = {"result": rv, "maintain": Draft202012Validator(
        res["properties"]["maintain"], resolver=RefResolver.from_schema(res))}
    seen = set()
    counts = collections.Counter()
    bad = []
    tests = sorted(d for d in glob.glob(os.path.join(root, "*")) if os.path.isdir(d))
    for d in tests:
        test = os.path.basename(d).replace("-", "/", 1)
        for f in sorted(glob.glob(os.path.join(d, "*.docs"))):
            for kind, verdict, text, note, cut in records(f):
                counts["records"] += 1
                if cut:
                    bad.append("%s: %s: %s" % (test, os.path.basename(f), cut))
                    continue
                if (kind, verdict, text) in seen:
                    continue
                seen.add((kind, verdict, text))
                problem = check(jv, rvs, kind, verdict, text, note, counts)
                if problem:
                    bad.append("%s: %s %s: %s\n    %s" % (test, kind, verdict, problem, short(text)))
    for b in bad:
        print(b)
    print("%d tests, %d records, %d distinct documents: %s" % (
        len(tests), counts.pop("records", 0), len(seen),
        ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()))))
    if bad:
        print("schema check FAILED: %d documents" % len(bad))
        return 1
    print("schema check ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
