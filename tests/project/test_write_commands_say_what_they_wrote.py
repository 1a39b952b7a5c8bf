"""``--write`` commands print what they wrote: a silent success reads like nothing happened."""

from __future__ import annotations

import shutil

import policies.docs
import stacks.spec.docs


def test_policies_docs_write_names_the_file_it_wrote(tmp_path, monkeypatch, capsys):
    target = tmp_path / "RULES.md"
    monkeypatch.setattr(policies.docs, "RULES_MD", target)
    assert policies.docs.main(["--write"]) == 0
    assert target.read_text(encoding="utf-8") == policies.docs.render()
    assert f"wrote {target}" in capsys.readouterr().out


def test_configuration_reference_write_names_the_page_it_wrote(tmp_path, monkeypatch, capsys):
    page = tmp_path / "configuration.md"
    shutil.copy(stacks.spec.docs.PAGE, page)
    monkeypatch.setattr(stacks.spec.docs, "PAGE", page)
    monkeypatch.setattr("sys.argv", ["stacks.spec.docs", "--write"])
    assert stacks.spec.docs.main() == 0
    assert stacks.spec.docs.reference() in page.read_text(encoding="utf-8")
    assert f"wrote the configuration reference into {page}" in capsys.readouterr().out
