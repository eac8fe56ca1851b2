"""One generated section of a hand-written Markdown file, between two marker lines: written in place,
or with check=True compared only (exit status 1 and a short diff when stale). Used by
scripts/results_readme.py and scripts/normaliser_tables.py (`make readme`; ctest runs both with
--check)."""
import difflib
import sys


def update(path, begin, end, generated, check, tool):
    """Replaces the text from `begin` to `end` (markers included) in `path` by `generated` (which
    starts with `begin` and ends with `end`). Returns the exit status."""
    with open(path, encoding="utf-8") as fh:
        old = fh.read()
    if begin not in old or end not in old:
        sys.exit(f"{tool}: {path} lacks the markers\n{begin}\n{end}")
    new = old[:old.index(begin)] + generated + old[old.index(end) + len(end):]
    if check:
        if new != old:
            diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"{path} (committed)",
                                        f"{path} (generated)", lineterm="", n=1)
            print("\n".join(list(diff)[:60]))
            print(f"{tool}: {path} is stale: run `make readme` and commit it", file=sys.stderr)
            return 1
        print(f"{tool}: {path} is up to date")
        return 0
    if new != old:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(new)
        print(f"{tool}: wrote {path}")
    else:
        print(f"{tool}: {path} is up to date")
    return 0
