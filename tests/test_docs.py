import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SOURCES = sorted(
    path
    for folder in ("sortie", "docs")
    for path in (ROOT / folder).rglob("*")
    if path.suffix in {".py", ".md", ".txt", ".toml"}
)
OUTSIDE = re.compile(r"\b(?:DESIGN|MISSIONS|SEED-FORMATS)\.md\b|\.\./shared|/work/shared")
"""Files that live outside the repository: the project must cite its own pages instead."""
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|^\[[^\]]+\]:\s*(\S+)", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def outside_citations(text: str) -> list[str]:
    """Return the lines of ``text`` that cite a file outside the repository."""
    return [line.strip() for line in text.splitlines() if OUTSIDE.search(line)]


def slug(heading: str) -> str:
    """Return the anchor a Markdown heading gets (GitHub's rule)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Return the anchors of the headings of ``page``."""
    text = FENCE.sub("", page.read_text())
    return {slug(h) for h in re.findall(r"^#{1,6}\s+(.*)$", text, flags=re.M)}


def broken_links(text: str, page: Path) -> list[str]:
    """Return the relative links of ``text`` (written in ``page``) that lead nowhere."""
    broken = []
    for match in LINK.finditer(FENCE.sub("", text)):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto: ... are not files of the repository
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.is_relative_to(ROOT.resolve()) or not goal.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            broken.append(f"{target}: no heading #{anchor} in {goal.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_examples_in_docs_run(page, tmp_path, monkeypatch):
    """Every ```python block of the README and docs/ runs as written."""
    # Stable-Baselines3's logger (docs/gym.md's PPO) makes a folder; else a new one in /tmp
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))
    for block in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S):
        exec(compile(block, str(page), "exec"), {"print": lambda *args: None})


def test_no_page_or_module_cites_files_outside_the_repository():
    """README, docs/ and the sortie package cite only files inside the repository."""
    found = [
        f"{path.relative_to(ROOT)}: {line}"
        for path in [ROOT / "README.md", *SOURCES]
        for line in outside_citations(path.read_text())
    ]
    assert found == [], "cite docs/design.md, docs/rescue.md or docs/aerial.md instead:\n" + (
        "\n".join(found)
    )


def test_citation_check_finds_a_citation_of_the_rules_file():
    """A docstring citing MISSIONS.md or ../shared is caught, one citing docs/ is not."""
    text = '"""Levels (MISSIONS.md section 1)."""\nsee ../shared/x\n"""See docs/rescue.md."""'
    assert outside_citations(text) == ['"""Levels (MISSIONS.md section 1)."""', "see ../shared/x"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_point_to_files_in_the_repository(page):
    """Every relative link of the README and docs/ leads to a file (and heading) that exists."""
    assert broken_links(page.read_text(), page) == []


def test_link_check_finds_a_missing_file_and_a_missing_heading():
    """A link to an absent file or heading is reported; web links and real targets are not."""
    page = ROOT / "docs" / "design.md"
    text = "[a](nowhere.md) [b](rescue.md#no-such-part) [c](rescue.md#rules) [d](https://x.org)"
    assert broken_links(text, page) == [
        "nowhere.md: no such file in the repository",
        "rescue.md#no-such-part: no heading #no-such-part in rescue.md",
    ]


def package_modules() -> list[str]:
    """Return each module of a package's folder, and of a family's folder, as ``pkg/name.py``."""
    package = ROOT / "sortie"
    shallow = [p for p in package.glob("*/*.py")]
    family_folders = [
        p for top in ("missions", "export", "report") for p in package.glob(f"{top}/*/*.py")
    ]
    return sorted(
        str(p.relative_to(package))
        for p in shallow + family_folders
        if p.stem not in ("__init__", "__main__")
    )


def test_the_architecture_page_names_every_module_and_only_modules_that_exist():
    """Each module of a package (and of a family's folder) is named; no name is of a gone one."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = [m for m in package_modules() if f"`{Path(m).name}`" not in text and m not in text]
    named = set(re.findall(r"`([a-z_0-9]+\.py)`", text))
    gone = sorted(n for n in named if not any((ROOT / "sortie").rglob(n)))
    assert (missing, gone) == ([], [])
