#!/usr/bin/env python3
"""Merkle Tree Verifier.

Builds a SHA-256 Merkle tree over files, prints the root, produces inclusion proofs and
verifies them.

    python3 merkle.py root FILE...
    python3 merkle.py prove INDEX FILE...      prints a JSON proof for FILE[INDEX]
    python3 merkle.py verify ROOT PROOF.json FILE
    python3 merkle.py selftest FILE...
"""

import argparse
import hashlib
import json
import sys


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def build_levels(leaves):
    if not leaves:
        raise ValueError("a Merkle tree needs at least one leaf")
    levels = [leaves]
    while len(levels[-1]) > 1:
        level = levels[-1]
        nxt = []
        for i in range(0, len(level), 2):
            right = level[i + 1] if i + 1 < len(level) else level[i]
            nxt.append(node_hash(level[i], right))
        levels.append(nxt)
    return levels


def prove(levels, index):
    proof = []
    for level in levels[:-1]:
        sibling = index ^ 1
        if sibling >= len(level):
            sibling = index
        proof.append({"side": "right" if sibling > index or sibling == index else "left",
                      "hash": level[sibling].hex()})
        index //= 2
    return proof


def verify(root_hex, proof, data):
    h = leaf_hash(data)
    for step in proof:
        other = bytes.fromhex(step["hash"])
        h = node_hash(h, other) if step["side"] == "right" else node_hash(other, h)
    return h.hex() == root_hex


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("root")
    r.add_argument("files", nargs="+")
    pr = sub.add_parser("prove")
    pr.add_argument("index", type=int)
    pr.add_argument("files", nargs="+")
    v = sub.add_parser("verify")
    v.add_argument("root")
    v.add_argument("proof")
    v.add_argument("file")
    st = sub.add_parser("selftest")
    st.add_argument("files", nargs="+")
    args = p.parse_args(argv)

    if args.cmd == "verify":
        with open(args.proof, encoding="utf-8") as f:
            ok = verify(args.root, json.load(f), read(args.file))
        print("valid" if ok else "INVALID")
        return 0 if ok else 1

    leaves = [leaf_hash(read(f)) for f in args.files]
    levels = build_levels(leaves)
    root = levels[-1][0].hex()
    if args.cmd == "root":
        print(root)
    elif args.cmd == "prove":
        print(json.dumps(prove(levels, args.index), indent=2))
    else:
        for i, f in enumerate(args.files):
            ok = verify(root, prove(levels, i), read(f))
            print(f"{f}: {'valid' if ok else 'INVALID'}")
            if not ok:
                return 1
        tampered = read(args.files[0]) + b"!"
        if verify(root, prove(levels, 0), tampered):
            print("tampered data verified: BUG")
            return 1
        print(f"root {root}")
        print("selftest passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
