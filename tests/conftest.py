import os
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LITMUS = os.path.join(ROOT, "litmus")


@pytest.fixture
def write(tmp_path):
    """Write a litmus file from a dedented string; returns its path."""
    def _write(text: str, name: str = "t.yaml") -> str:
        p = tmp_path / name
        p.write_text(textwrap.dedent(text).lstrip("\n"))
        return str(p)
    return _write
