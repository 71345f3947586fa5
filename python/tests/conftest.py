import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
BUILD = os.environ.get("KFORGE_BUILD_DIR", os.path.join(ROOT, "build"))


@pytest.fixture(scope="session")
def compile_artifact(tmp_path_factory):
    """Compiles a payload with kforge-compile; returns the artifact directory."""
    def compile(payload, *flags, recipe=None):
        out = tmp_path_factory.mktemp("artifact")
        if recipe:
            flags += ("--recipe", os.path.join(ROOT, recipe))
        subprocess.run([os.path.join(BUILD, "bin", "kforge-compile"), os.path.join(ROOT, payload), "-o", str(out),
                        *flags], check=True)
        return str(out)
    return compile
