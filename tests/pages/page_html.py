"""A small HTML reader for page tests: elements with their attributes and their text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element] = field(default_factory=list)
    content: list[Element | str] = field(default_factory=list)  # text and children, in order

    @property
    def text(self) -> str:
        return " ".join("".join(self._texts()).split())

    def _texts(self) -> list[str]:
        out: list[str] = []
        for piece in self.content:
            out += [piece] if isinstance(piece, str) else piece._texts()
        return out

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def find_all(self, tag: str | None = None, **attrs: str | bool) -> list[Element]:
        """Descendants by tag and attribute (value True: present; class_: one of the classes)."""
        found = []
        for child in self.children:
            if child.matches(tag, attrs):
                found.append(child)
            found += child.find_all(tag, **attrs)
        return found

    def find(self, tag: str | None = None, **attrs: str | bool) -> Element:
        hits = self.find_all(tag, **attrs)
        assert hits, f"no <{tag or '*'} {attrs}>"
        return hits[0]

    def matches(self, tag: str | None, attrs: dict[str, str | bool]) -> bool:
        if tag and self.tag != tag:
            return False
        for key, want in attrs.items():
            if key == "class_":
                if want not in self.classes():
                    return False
                continue
            name = key.replace("_", "-")
            if want is True:
                if name not in self.attrs:
                    return False
            elif self.attrs.get(name) != want:
                return False
        return True


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        self.stack[-1].content.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].content.append(data)


def parse(html: str | bytes) -> Element:
    builder = _Builder()
    builder.feed(html.decode() if isinstance(html, bytes) else html)
    return builder.root
