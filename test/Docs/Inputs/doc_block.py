#!/usr/bin/env python3
"""Prints the shell commands of a documentation page between
`<!-- NAME:begin -->` and `<!-- NAME:end -->` (code fences dropped), with
`build/bin/` and `bench` made absolute, so that a test runs what the page
tells a user to run.

usage: doc_block.py PAGE NAME BUILD_BIN SRC_ROOT
"""
import sys


def main():
    page, name, build_bin, src = sys.argv[1:5]
    text = open(page).read()
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    block = text[text.index(begin) + len(begin):text.index(end)]
    lines = [l for l in block.strip().splitlines() if not l.startswith("```")]
    script = "\n".join(lines).replace("build/bin/", build_bin.rstrip("/") + "/")
    script = script.replace('sys.path.insert(0, "bench")',
                            'sys.path.insert(0, "%s/bench")' % src)
    script = script.replace("sys.path.insert(0, 'bench')",
                            "sys.path.insert(0, '%s/bench')" % src)
    print("set -e\n" + script)


if __name__ == "__main__":
    main()
