"""The tree checkers (scripts/check_*.py) fail on a small tree that breaks each rule,
and pass on the same tree once it is mended."""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = pathlib.Path(os.environ.get("TALLY_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2])) / "scripts"

ARCHITECTURE = """# Architecture
## Which layer may include which
| layer | may include |
| --- | --- |
| `common` | |
| `config` | `common` |
| `catalog` | `common`, `config` |
| `storage` | `common`, `config`, `catalog` |
| `gpu` | `common`, `config`, `storage` |
| `executor` | `common`, `config`, `catalog`, `storage`, `gpu` |
| `protocol` | `common`, `config` |
| `server` | `common`, `config`, `catalog`, `storage`, `gpu`, `executor`, `protocol` |
"""

BODY = "\n".join(f"  int value_{i} = compute({i}, other_{i});" for i in range(12))


class TreeCheckers(unittest.TestCase):
    def setUp(self):
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="tally_tree_"))
        (self.root / "docs").mkdir()
        (self.root / "docs" / "architecture.md").write_text(ARCHITECTURE)
        for layer in ["common", "config", "catalog", "storage", "gpu", "executor", "protocol", "server"]:
            (self.root / layer).mkdir()
            (self.root / layer / "CMakeLists.txt").write_text(f"add_library(tally_{layer} {layer}.cpp)\n")
            (self.root / layer / f"{layer}.cpp").write_text('#include "common/error.hpp"\nint f() { return 1; }\n')

    def tearDown(self):
        shutil.rmtree(self.root)

    def run_check(self, name):
        return subprocess.run([sys.executable, str(SCRIPTS / f"check_{name}.py"), str(self.root)],
                              capture_output=True, text=True)

    def write(self, path, text):
        (self.root / path).write_text(text)

    def test_a_clean_tree_passes_every_check(self):
        for name in ["layers", "sources", "duplicates"]:
            self.assertEqual(self.run_check(name).returncode, 0, name)

    def test_an_include_up_the_layers_fails(self):
        self.write("gpu/gpu.cpp", '#include "executor/plan.hpp"\n')
        result = self.run_check("layers")
        self.assertEqual(result.returncode, 1)
        self.assertIn("gpu includes executor", result.stdout)
        self.write("gpu/gpu.cpp", '#include "storage/chunk_file.hpp"\n')
        self.assertEqual(self.run_check("layers").returncode, 0)

    def test_siblings_do_not_include_each_other(self):
        self.write("executor/executor.cpp", '#include "protocol/query_handler.hpp"\n')
        self.assertEqual(self.run_check("layers").returncode, 1)

    def test_a_link_or_a_source_outside_the_folder_fails(self):
        self.write("catalog/CMakeLists.txt",
                   "add_library(tally_catalog catalog.cpp)\ntarget_link_libraries(tally_catalog PUBLIC tally_gpu)\n")
        result = self.run_check("layers")
        self.assertIn("catalog links tally_gpu (gpu)", result.stdout)
        self.write("catalog/CMakeLists.txt", "add_library(tally_other ${CMAKE_SOURCE_DIR}/executor/x.cpp)\n")
        result = self.run_check("layers")
        self.assertEqual(result.returncode, 1)
        self.assertIn("outside catalog/", result.stdout)

    def test_a_long_file_a_getenv_and_a_diary_comment_fail(self):
        self.write("executor/big.cpp", "int x;\n" * 801)
        self.assertIn("801 lines", self.run_check("sources").stdout)
        self.write("executor/big.cpp", "int x;\n" * 800)
        self.assertEqual(self.run_check("sources").returncode, 0)
        self.write("server/env.cpp", 'const char* p = std::getenv("TALLY_X");\n')
        self.assertIn("getenv outside config/", self.run_check("sources").stdout)
        self.write("server/env.cpp", "\n")
        self.write("gpu/notes.cpp", "// 12% faster on the H100 (bench/RESULTS.md)\n")
        self.assertEqual(self.run_check("sources").returncode, 1)
        self.write("gpu/notes.cpp", "// days since 2000-01-01, PostgreSQL's epoch\n")
        self.assertEqual(self.run_check("sources").returncode, 0)

    def test_ten_repeated_lines_fail_and_nine_pass(self):
        self.write("executor/a.cpp", "void a() {\n" + BODY + "\n}\n")
        self.write("gpu/b.cpp", "void b() {\n" + BODY + "\n}\n")
        result = self.run_check("duplicates")
        self.assertEqual(result.returncode, 1)
        self.assertIn("executor/a.cpp", result.stdout)
        nine = "\n".join(BODY.splitlines()[:9])
        self.write("gpu/b.cpp", "void b() {\n" + nine + "\n}\n")
        self.assertEqual(self.run_check("duplicates").returncode, 0)


if __name__ == "__main__":
    unittest.main()
