"""What the tree checkers (scripts/check_*.py) share: the product folders, their source files,
and the report a check prints and exits with."""
import pathlib
import sys

PRODUCT = ["common", "config", "catalog", "storage", "gpu", "executor", "protocol", "server"]
SOURCE_SUFFIXES = {".cpp", ".hpp", ".cu", ".cuh", ".h", ".c"}


def sources(folder):
    """The C++ and CUDA source files below a folder, in a stable order."""
    return [f for f in sorted(folder.rglob("*")) if f.suffix in SOURCE_SUFFIXES and f.is_file()]


def run(name, check, failed, passed, root=None):
    """Runs check(root) -> [problem lines]; prints them and a closing line; returns the exit code."""
    if root is None:
        root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{name}: {len(problems)} {failed}")
        return 1
    print(f"{name}: {passed}")
    return 0
