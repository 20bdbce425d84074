"""The objective function's restricted expression language (auction.md 8.2).

Parsed by hand into a tree and evaluated by walking it: no ``eval``, no attribute access,
nothing but the names of the table in auction.md 8.2. Grammar (left-associative)::

    expr   := term (("+" | "-") term)*
    term   := factor (("*" | "/" | "mod") factor)*
    factor := NUMBER | NAME | "-" factor | "(" expr ")" | "count(" SCALAR "," LIST ")"

Errors read ``invalid objective: <reason> at position <n>`` (n counts characters from 1).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_LENGTH = 1000
# Nesting (parentheses, unary minus, count) and tree depth are bounded too: the parser and
# the evaluator recurse, so 333 "(" or 998 "-" must be a clear error, not a RecursionError.
MAX_DEPTH = 64

NUMBER_NAMES = frozenset({
    "ai.instance_number", "ai.app_id", "ai.total_instances", "ai.memory_mb", "ai.disk_mb",
    "r.available_memory_mb", "r.available_disk_mb", "r.available_containers",
    "r.total_memory_mb", "r.total_disk_mb", "r.total_containers", "r.starting_containers",
    "r.index", "r.task_count", "r.avail_zone_number",
})
STRING_NAMES = frozenset({"ai.app_source_blob_id"})
LIST_NAMES = frozenset({"r.running_app_ids", "r.cached_blob_ids"})
CONSTANT_NAMES = frozenset({"azs", "alpha", "beta", "gamma", "delta"})

_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|(?P<op>[-+*/(),]))"
)


class ObjectiveError(ValueError):
    """A rejected objective; the message names the position."""

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(f"invalid objective: {reason} at position {position + 1}")
        self.reason = reason
        self.position = position


@dataclass(frozen=True, slots=True)
class Num:
    value: float


@dataclass(frozen=True, slots=True)
class Name:
    name: str  # a number name or a constant


@dataclass(frozen=True, slots=True)
class Neg:
    operand: Node


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # + - * / mod
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Count:
    scalar: Node | str  # a numeric node, or the string name ai.app_source_blob_id
    list_name: str


Node = Num | Name | Neg | BinOp | Count


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            start = pos + len(text[pos:]) - len(text[pos:].lstrip())
            raise ObjectiveError(f"unexpected character {text[start]!r}", start)
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind), match.start(kind)))
        pos = match.end()
    tokens.append(("end", "", len(text)))
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, str, int]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, value: str) -> None:
        kind, text, pos = self.take()
        if text != value or kind == "end":
            found = "end of expression" if kind == "end" else repr(text)
            raise ObjectiveError(f"expected {value!r}, found {found}", pos)

    def expr(self) -> Node:
        node = self.term()
        while self.peek()[0] == "op" and self.peek()[1] in "+-":
            op = self.take()[1]
            node = BinOp(op, node, self.term())
        return node

    def term(self) -> Node:
        node = self.factor()
        while True:
            kind, text, pos = self.peek()
            if kind == "op" and text in "*/":
                self.take()
                node = BinOp(text, node, self.factor())
            elif kind == "name" and text == "mod":
                self.take()
                right = self.factor()
                if not _is_constant(right):
                    raise ObjectiveError("the modulus must be a constant", pos)
                node = BinOp("mod", node, right)
            else:
                return node

    def factor(self) -> Node:
        self.depth += 1
        try:
            return self._factor()
        finally:
            self.depth -= 1

    def _factor(self) -> Node:
        kind, text, pos = self.take()
        if self.depth > MAX_DEPTH:
            raise ObjectiveError(f"nested deeper than {MAX_DEPTH} levels", pos)
        if kind == "num":
            return Num(float(text))
        if kind == "op" and text == "-":
            return Neg(self.factor())
        if kind == "op" and text == "(":
            node = self.expr()
            self.expect(")")
            return node
        if kind == "name" and text == "count" and self.peek()[1] == "(":
            self.take()
            scalar: Node | str
            if self.peek()[1] in STRING_NAMES:
                scalar = self.take()[1]
            else:
                scalar = self.expr()
            self.expect(",")
            _, lname, lpos = self.take()
            if lname not in LIST_NAMES:
                raise ObjectiveError(f"count needs a list, found {lname or 'nothing'!r}", lpos)
            self.expect(")")
            return Count(scalar, lname)
        if kind == "name":
            if text in NUMBER_NAMES or text in CONSTANT_NAMES:
                return Name(text)
            if text in LIST_NAMES or text in STRING_NAMES:
                raise ObjectiveError(f"{text} can only be used inside count(...)", pos)
            raise ObjectiveError(f"unknown name {text!r}", pos)
        found = "end of expression" if kind == "end" else repr(text)
        raise ObjectiveError(f"unexpected {found}", pos)


def _is_constant(node: Node) -> bool:
    if isinstance(node, Num):
        return True
    if isinstance(node, Name):
        return node.name in CONSTANT_NAMES
    if isinstance(node, Neg):
        return _is_constant(node.operand)
    if isinstance(node, BinOp):
        return _is_constant(node.left) and _is_constant(node.right)
    return False


def parse(text: str) -> Node:
    """Parse (and so validate) an objective; raises ``ObjectiveError``."""
    if len(text) > MAX_LENGTH:
        raise ObjectiveError(f"longer than {MAX_LENGTH} characters", MAX_LENGTH)
    parser = _Parser(text)
    node = parser.expr()
    kind, value, pos = parser.peek()
    if kind != "end":
        raise ObjectiveError(f"unexpected {value!r}", pos)
    if _depth(node) > MAX_DEPTH:
        raise ObjectiveError(f"nested deeper than {MAX_DEPTH} levels", 0)
    return node


def _depth(root: Node) -> int:
    """The tree's depth, without recursion (``1 + 1 + …`` nests to the left)."""
    deepest = 0
    stack: list[tuple[Node | str, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, BinOp):
            stack += [(node.left, depth + 1), (node.right, depth + 1)]
        elif isinstance(node, Neg):
            stack.append((node.operand, depth + 1))
        elif isinstance(node, Count):
            stack.append((node.scalar, depth + 1))
    return deepest


class _Undefined(Exception):
    """Division or mod by zero: the cell's value is -inf (auction.md 8.2)."""


def _eval(node: Node, env: Mapping[str, Any]) -> float:
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Name):
        return float(env[node.name])
    if isinstance(node, BinOp):
        left = _eval(node.left, env)
        right = _eval(node.right, env)
        if node.op == "+":
            return left + right
        if node.op == "-":
            return left - right
        if node.op == "*":
            return left * right
        if right == 0.0 or not math.isfinite(left):
            raise _Undefined
        # mod = math.fmod: the sign of the dividend, like Go's math.Mod.
        return left / right if node.op == "/" else math.fmod(left, right)
    if isinstance(node, Neg):
        return -_eval(node.operand, env)
    scalar = env[node.scalar] if isinstance(node.scalar, str) else _eval(node.scalar, env)
    # Lists are given as element -> multiplicity maps, so count is one lookup.
    return float(env[node.list_name].get(scalar, 0))


def evaluate(node: Node, env: Mapping[str, Any]) -> float:
    """The value of a parsed objective in ``env`` (names -> numbers, strings or count maps)."""
    try:
        value = _eval(node, env)
    except (_Undefined, OverflowError, ValueError):
        return -math.inf
    return value if math.isfinite(value) else -math.inf
