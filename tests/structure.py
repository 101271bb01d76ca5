"""The structure of the ``lagsim`` package read from its syntax (``ast``, nothing imported): the
module import graph, the layers, private names that cross modules, attribute writes on other
modules' objects, and sizes. tests/test_architecture.py holds the rules of issue 23 with it and
bench/architecture.py measures with it.

**Imports.** An edge ``a → b`` is any import of ``b`` by ``a``: at module level or inside a
function; ``import lagsim.x.y`` and ``from lagsim.x import y`` (``y`` a module: the edge goes to
it, else to ``lagsim.x``), relative imports resolved; a string constant that is a whole dotted
name ``"lagsim.x.y"`` or ``"lagsim.x:attr"`` (what ``importlib.import_module`` or a lazy table
takes). Importing ``lagsim.a.b.c`` runs the ``__init__`` of ``lagsim.a`` and ``lagsim.a.b`` too,
so the packages on the way are edges as well. Imports of the importer's own ancestor packages
are not edges: Python runs them before the importer (``from lagsim import __version__``, or
``importlib.resources`` reading ``"lagsim.numeric"``), and counting them would tie every module
to the top-level package, whose lazy table names the API.

**Attribute writes** (:func:`foreign_writes`). A module may set attributes only of objects it
made. A write is ``obj.attr = …`` (also augmented, annotated, inside tuple targets, ``del
obj.attr``, ``obj.__dict__[k] = …``), ``setattr(obj, …)``, ``delattr(obj, …)``,
``<anything>.__setattr__(obj, …)`` or ``obj.__dict__.update(…)``. It is allowed when ``obj`` is

1. the first parameter (``self``, ``cls``) of an enclosing method of a class body;
2. a class or function defined in this module (a def or class statement in the module or in
   the function that writes), or an attribute of one (``System.simulate.__doc__``);
3. a name every assignment of which, in the nearest scope that assigns it (the function, the
   functions around it, the module), makes a new object of this module: a class of this
   module (``C(...)``, ``C.factory(...)``, ``object.__new__(C)``, ``C.__new__(C)``), ``cls(...)``
   or ``type(self)(...)``, a copy of ``self`` (``copy.copy(self)``, ``dataclasses.replace(self,
   …)``), a call of a function of this module whose return annotation is such a class, a
   literal; or ``self.x`` (directly, or through a local assigned from it) when every
   ``self.x = …`` of the class's methods is such a value (``None`` placeholders left out);
4. the same with a library instead of this module: a call of a name imported from outside
   ``lagsim`` or of a builtin. The rule is about lagsim's objects, and an object the module
   made from a library is its own;
5. a parameter annotated with a class of this module or of a library (``ctx: click.Context``,
   ``solver: OdeSolver``, ``level: _Level``);
6. by name: the ctypes protocol (:data:`CTYPES_PROTOCOL`: ``argtypes``, ``restype``,
   ``errcheck`` of any object) and the standard hooks of :data:`STDLIB_HOOKS`.

Everything else is reported: a parameter without such an annotation, an unpacked or loop
value, an attribute of another object (``self.form.x = …`` writes into the object
``self.form``), a module, a name imported from another lagsim module, the result of a lagsim
function of another module or of an instance of another module's class (``Samples(problem)``).
"""

from __future__ import annotations

import ast
import builtins
import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as tomli, which mypy requires there
    import tomli as tomllib

PACKAGE = "lagsim"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "naming", "records"), ("spec",), ("symbolic",), ("numeric",), ("output",), ("run",),
    ("export",), ("analysis",), ("sweep",), ("viz",), ("api",), ("cli",))
"""Issue 23's layering, bottom to top: the first name under ``lagsim.`` of a module decides its
layer, and an import may point down or within its layer (without a cycle), never up."""

OUTSIDE_LAYERS = ("lagsim", "lagsim.__main__")
"""The top-level package (the API's lazy re-exports) and ``python -m lagsim``."""

FORBIDDEN = {
    "spec": ("run", "numeric", "analysis", "viz", "cli"),
    "symbolic": ("numeric", "run", "viz", "cli"),
}
"""Issue 23's explicit rules: what a stage imports nothing of."""

CONFINED = {"click": "lagsim.cli", "matplotlib": "lagsim.viz"}
"""Libraries only one subpackage may import."""

_STRING_IMPORT = re.compile(r"lagsim(\.\w+)+(:\w+)?")


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def private(name: str) -> bool:
    """Whether ``name`` is private: a leading underscore, not a dunder."""
    return name.startswith("_") and not _dunder(name)


@dataclass(frozen=True)
class Edge:
    """An import of ``target`` by ``source`` at ``line``; ``how`` is ``import``, ``from``,
    ``string`` or ``package`` (the ``__init__`` an import of a submodule runs)."""

    source: str
    target: str
    line: int
    how: str


@dataclass(frozen=True)
class Site:
    """A place in a module's file and what is found there."""

    module: str
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


@dataclass(frozen=True)
class Binding:
    """What an imported name stands for: a lagsim module (``attr`` None), a name ``attr`` of a
    lagsim module, or something outside lagsim (``module`` its dotted name, ``lagsim`` False)."""

    module: str
    attr: str | None
    lagsim: bool


@dataclass(frozen=True)
class Module:
    """One module: dotted name, file (relative to the root) and syntax tree."""

    name: str
    path: str
    tree: ast.Module
    is_package: bool
    nodes: tuple[ast.AST, ...] = field(default=(), compare=False, repr=False)
    """Every node of ``tree`` (``ast.walk``, once)."""

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


@dataclass(frozen=True)
class Package:
    """Every module of ``lagsim/`` under ``root`` (the repository)."""

    root: Path
    modules: dict[str, Module] = field(hash=False)

    @staticmethod
    @cache
    def scan(root: Path) -> Package:
        modules: dict[str, Module] = {}
        for path in sorted((root / PACKAGE).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            rel = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
            modules[name] = Module(name, rel, tree, is_package, tuple(ast.walk(tree)))
        return Package(root, modules)

    def resolve(self, dotted: str) -> str | None:
        """The longest prefix of ``dotted`` that is a module of the package."""
        while dotted and dotted not in self.modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _ancestors(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def bindings(package: Package, module: Module) -> Iterator[tuple[ast.AST, str, Binding]]:
    """Every name an import of ``module`` binds (at any depth), with the import node."""
    for node in module.nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.partition(".")[0]
                inside = top == PACKAGE
                if alias.asname:
                    yield node, alias.asname, Binding(alias.name, None, inside)
                else:
                    yield node, top, Binding(top, None, inside)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            inside = base.partition(".")[0] == PACKAGE
            for alias in node.names:
                if alias.name == "*":
                    continue
                full = f"{base}.{alias.name}"
                bound = alias.asname or alias.name
                if inside and full in package.modules:
                    yield node, bound, Binding(full, None, True)
                else:
                    yield node, bound, Binding(base, alias.name, inside)


@cache
def edges(package: Package) -> list[Edge]:
    """Every import edge between modules of the package (see the module docstring)."""
    found: list[Edge] = []
    for module in package.modules.values():
        own = _ancestors(module.name)

        def add(dotted: str, line: int, how: str, module: Module = module,
                own: set[str] = own) -> None:
            target = package.resolve(dotted)
            if target is None or target == module.name or target in own:
                return
            found.append(Edge(module.name, target, line, how))
            for pkg in sorted(_ancestors(target) - own):
                if pkg in package.modules and pkg != module.name:
                    found.append(Edge(module.name, pkg, line, "package"))

        for node in module.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.partition(".")[0] == PACKAGE:
                        add(alias.name, node.lineno, "import")
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(module, node)
                if base.partition(".")[0] != PACKAGE:
                    continue
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    add(full if full in package.modules else base, node.lineno, "from")
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and _STRING_IMPORT.fullmatch(node.value)):
                add(node.value.partition(":")[0], node.lineno, "string")
    return found


def external_imports(package: Package) -> list[Site]:
    """Every import of a module outside lagsim: ``what`` is its top-level name."""
    found: list[Site] = []
    for module in package.modules.values():
        for node in module.nodes:
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            elif (isinstance(node, ast.Call) and node.args
                  and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)
                  and ((isinstance(node.func, ast.Attribute)
                        and node.func.attr == "import_module")
                       or (isinstance(node.func, ast.Name) and node.func.id == "__import__"))):
                names = [node.args[0].value]
            for name in names:
                top = name.partition(".")[0]
                if top and top != PACKAGE:
                    found.append(Site(module.name, module.path, getattr(node, "lineno", 0), top))
    return found


def cycles(package: Package) -> list[tuple[list[str], list[Edge]]]:
    """The strongly connected sets of more than one module (largest first), each with the
    import edges among its members: the ones to cut."""
    graph: dict[str, set[str]] = {name: set() for name in package.modules}
    all_edges = edges(package)
    for edge in all_edges:
        graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    result = []
    for component in sorted(components, key=lambda c: (-len(c), c)):
        if len(component) > 1:
            members = set(component)
            inside = sorted({(e.source, e.target, e.line, e.how): e for e in all_edges
                             if e.source in members and e.target in members}.values(),
                            key=lambda e: (e.source, e.line, e.target))
            result.append((component, inside))
    return result


def layer(name: str) -> int | None:
    """The layer of a module (its index in :data:`LAYERS`), None outside the layering (the
    top-level package, ``__main__``); a module under a name no layer has raises KeyError."""
    if name in OUTSIDE_LAYERS:
        return None
    stage = name.split(".")[1]
    for number, stages in enumerate(LAYERS):
        if stage in stages:
            return number
    raise KeyError(f"{name}: no layer holds 'lagsim.{stage}' (add it to structure.LAYERS)")


def unplaced(package: Package) -> list[str]:
    """Modules whose stage has no layer."""
    found = []
    for name in package.modules:
        try:
            layer(name)
        except KeyError:
            found.append(name)
    return sorted(found)


def upward(package: Package) -> list[Edge]:
    """Imports that point up the layering (the packages on the way left out: the import of the
    module itself is reported)."""
    found = []
    for edge in edges(package):
        if edge.how == "package":
            continue
        try:
            low, high = layer(edge.source), layer(edge.target)
        except KeyError:
            continue
        if low is not None and high is not None and high > low:
            found.append(edge)
    return sorted(set(found), key=lambda e: (e.source, e.line, e.target))


def forbidden(package: Package) -> list[Edge]:
    """Imports :data:`FORBIDDEN` names."""
    found = []
    for edge in edges(package):
        if edge.how == "package":
            continue
        source, target = edge.source.split("."), edge.target.split(".")
        if (len(source) > 1 and len(target) > 1
                and target[1] in FORBIDDEN.get(source[1], ())):
            found.append(edge)
    return sorted(set(found), key=lambda e: (e.source, e.line, e.target))


def confined(package: Package) -> list[Site]:
    """Imports of a :data:`CONFINED` library outside its subpackage."""
    return [site for site in external_imports(package) if site.what in CONFINED
            and not (site.module == CONFINED[site.what]
                     or site.module.startswith(CONFINED[site.what] + "."))]


def _module_of(package: Package, node: ast.expr, bound: dict[str, Binding]) -> Binding | None:
    """What an expression ``a`` or ``a.b.c`` names when it is an imported lagsim module or a
    name imported from one."""
    if isinstance(node, ast.Name):
        binding = bound.get(node.id)
        return binding if binding is not None and binding.lagsim else None
    if isinstance(node, ast.Attribute):
        owner = _module_of(package, node.value, bound)
        if owner is not None and owner.attr is None:
            full = f"{owner.module}.{node.attr}"
            if full in package.modules:
                return Binding(full, None, True)
            return Binding(owner.module, node.attr, True)
    return None


def private_crossings(package: Package) -> list[Site]:
    """Private names of one lagsim module used by another: ``from lagsim.x import _y``, ``import
    lagsim.x._m`` (a private module used outside its package), ``m._y`` and ``getattr(m,
    "_y")`` where ``m`` is an imported lagsim module, and ``C._y`` where ``C`` was imported
    from another lagsim module."""
    found: list[Site] = []
    for module in package.modules.values():
        bound: dict[str, Binding] = {}
        for node, name, binding in bindings(package, module):
            if not binding.lagsim:
                continue
            bound[name] = binding
            line = getattr(node, "lineno", 0)
            if binding.attr is not None and private(binding.attr) \
                    and binding.module != module.name:
                found.append(Site(module.name, module.path, line,
                                  f"imports {binding.module}.{binding.attr}"))
            elif binding.attr is None:
                parts = binding.module.split(".")
                for i, part in enumerate(parts):
                    home = ".".join(parts[:i])
                    if private(part) and not (module.name == home
                                              or module.name.startswith(home + ".")):
                        found.append(Site(module.name, module.path, line,
                                          f"imports the private module {binding.module}"))
        for node in module.nodes:
            target: ast.expr | None = None
            attr = ""
            if isinstance(node, ast.Attribute) and private(node.attr):
                target, attr = node.value, node.attr
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
                  and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                  and isinstance(node.args[1].value, str) and private(node.args[1].value)):
                target, attr = node.args[0], node.args[1].value
            if target is None:
                continue
            owner = _module_of(package, target, bound)
            if owner is None or owner.module == module.name:
                continue
            named = owner.module if owner.attr is None else f"{owner.module}.{owner.attr}"
            found.append(Site(module.name, module.path, getattr(node, "lineno", 0),
                              f"{ast.unparse(target)}.{attr} ({named}.{attr})"))
    return sorted(set(found), key=lambda s: (s.path, s.line, s.what))


LIBRARY_PRIVATES = frozenset({
    "_step_impl", "_dense_output_impl",
    "_replace", "_asdict", "_fields", "_make",
    "_value_", "_name_", "_missing_", "_generate_next_value_", "_ignore_",
})
"""Underscore names a library documents for its users (scipy's ``OdeSolver`` hooks, a
namedtuple's and an enum's API): a lagsim class that overrides one does not own the name."""


def _private_names_defined(module: Module) -> set[str]:
    """The private names a module defines: functions, classes, names and attributes it
    assigns (``self._x = …``, ``obj._x = …``), class attributes."""
    found: set[str] = set()
    for node in module.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            found.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
    return {name for name in found if private(name)}


def private_attributes(package: Package) -> list[Site]:
    """Private attributes of objects read where the module does not define the name but another
    lagsim module does: ``form._symbolic`` in ``cloop`` when only ``run.reduced`` defines
    ``_symbolic``. A name some library also documents (:data:`LIBRARY_PRIVATES`) is not counted,
    and neither is an attribute of an imported module (:func:`private_crossings` reports those).
    A heuristic by names (``ast`` knows no types): a name defined in the reading module too is
    taken for the module's own."""
    defines = {name: _private_names_defined(module)
               for name, module in package.modules.items()}
    found: list[Site] = []
    for module in package.modules.values():
        bound = {name: b for _, name, b in bindings(package, module) if b.lagsim}
        own = defines[module.name]
        for node in module.nodes:
            if not (isinstance(node, ast.Attribute) and private(node.attr)
                    and node.attr not in own and node.attr not in LIBRARY_PRIVATES):
                continue
            if _module_of(package, node.value, bound) is not None:
                continue
            owners = sorted(name for name, names in defines.items() if node.attr in names)
            if owners:
                found.append(Site(module.name, module.path, node.lineno,
                                  f"{ast.unparse(node)} (defined in {', '.join(owners)})"))
    return sorted(set(found), key=lambda s: (s.path, s.line, s.what))


# --- attribute writes -------------------------------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _own_statements(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope`` outside its nested functions (class bodies are walked: their
    statements run in the scope that defines the class)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


@dataclass(frozen=True)
class _Facts:
    """What one scope binds and writes, from one pass over its own nodes: ``assigned`` maps a
    name to its values (an ``ast.arg`` for a parameter, None for a binding whose value is not
    one expression: a loop variable, an unpacked tuple, ``with … as``, ``except … as``);
    ``defined`` the names of its def and class statements, ``classes`` those of its classes;
    ``writes`` (node, object, attribute) of each attribute write."""

    assigned: dict[str, list[ast.expr | ast.arg | None]]
    defined: frozenset[str]
    classes: frozenset[str]
    writes: tuple[tuple[ast.AST, ast.expr, str], ...]


def _facts(scope: ast.AST) -> _Facts:
    assigned: dict[str, list[ast.expr | ast.arg | None]] = {}
    defined: set[str] = set()
    classes: set[str] = set()
    writes: list[tuple[ast.AST, ast.expr, str]] = []
    if isinstance(scope, _SCOPES):
        arguments = scope.args
        for arg in (arguments.posonlyargs + arguments.args + arguments.kwonlyargs
                    + [a for a in (arguments.vararg, arguments.kwarg) if a]):
            assigned.setdefault(arg.arg, []).append(arg)
    for node in _own_statements(scope):
        writes.extend((node, obj, attr) for obj, attr in _written_object(node))
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
                else:
                    for name in _stored(target):
                        assigned.setdefault(name, []).append(None)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(
                node.target, ast.Name) and node.value is not None:
            assigned.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            for name in _stored(node.target):
                assigned.setdefault(name, []).append(None)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            for name in _stored(node.optional_vars):
                assigned.setdefault(name, []).append(None)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            assigned.setdefault(node.name, []).append(None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(node.name)
        elif isinstance(node, ast.ClassDef):
            defined.add(node.name)
            classes.add(node.name)
    return _Facts(assigned, frozenset(defined), frozenset(classes), tuple(writes))


def _stored(target: ast.expr) -> list[str]:
    """The names an assignment target binds (not the objects whose attributes or items it
    sets)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for elt in target.elts for name in _stored(elt)]
    if isinstance(target, ast.Starred):
        return _stored(target.value)
    return []


CTYPES_PROTOCOL = frozenset({"argtypes", "restype", "errcheck"})
"""Attributes of a ctypes foreign function that ctypes asks its caller to set."""

STDLIB_HOOKS = frozenset({("sys", "stdout"), ("sys", "stderr"), ("sys", "excepthook"),
                          ("warnings", "showwarning")})
"""Attributes of standard modules their documentation says a program may replace."""


@dataclass(frozen=True)
class _Context:
    """What one module defines and imports."""

    bound: dict[str, Binding]
    classes: frozenset[str]
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    defined: frozenset[str]


@dataclass(frozen=True)
class _Scope:
    """One function (or the module) of a module: ``selves`` are the first parameters of the
    enclosing methods, ``lookup`` the facts of the scope and those around it (innermost
    first, the module last), ``self_attrs`` the values the enclosing class's methods assign to
    ``self.<attr>``."""

    ctx: _Context
    selves: frozenset[str]
    lookup: tuple[_Facts, ...]
    self_attrs: dict[str, list[ast.expr]]

    @property
    def local_classes(self) -> frozenset[str]:
        return self.lookup[0].classes

    def own_class(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Name):
            return (expr.id in self.ctx.classes or expr.id in self.local_classes
                    or expr.id in self.selves)
        return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)
                and expr.func.id == "type" and len(expr.args) == 1
                and isinstance(expr.args[0], ast.Name) and expr.args[0].id in self.selves)

    def typed(self, annotation: ast.expr | None) -> str | None:
        """``own class`` or ``library`` when every type ``annotation`` names (``X``, ``m.X``,
        ``X | None``, ``"X"``) is a class of this module or a library's, else None."""
        if annotation is None:
            return None
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [side for side in (annotation.left, annotation.right)
                     if not (isinstance(side, ast.Constant) and side.value is None)]
            kinds = {self.typed(side) for side in sides}
            return None if None in kinds or not kinds else min(kinds, key=str)
        if isinstance(annotation, ast.Name) and annotation.id in self.ctx.classes:
            return "own class"
        root = annotation
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name):
            binding = self.ctx.bound.get(root.id)
            if binding is not None and not binding.lagsim:
                return "library"
        return None

    def made_here(self, value: ast.expr | None, depth: int = 0) -> str | None:
        """Why ``value`` is an object the module made (rules 3 and 4 of the module
        docstring), None when it is not."""
        if (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
                and value.value.id in self.selves and depth < 2):
            values = [v for v in self.self_attrs.get(value.attr, [])
                      if not (isinstance(v, ast.Constant) and v.value is None)]
            if values and all(self.made_here(v, depth + 1) for v in values):
                return "held by self, made by this module"
            return None
        if isinstance(value, (ast.Constant, ast.Dict, ast.List, ast.Set, ast.Tuple, ast.ListComp,
                              ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.Lambda,
                              ast.JoinedStr)):
            return "literal"
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        if self.own_class(func):
            return "own class"
        if isinstance(func, ast.Attribute):
            if func.attr == "__new__" and value.args and self.own_class(value.args[0]):
                return "own class"
            if self.own_class(func.value):
                return "own class"
        if isinstance(func, ast.Name) and func.id in self.ctx.functions:
            return self.typed(self.ctx.functions[func.id].returns)
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else "")
        if name in ("copy", "deepcopy", "replace") and value.args and isinstance(
                value.args[0], ast.Name) and value.args[0].id in self.selves:
            return "copy of self"
        root = func
        while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name):
            binding = self.ctx.bound.get(root.id)
            if binding is not None and not binding.lagsim:
                return "library"
            if (binding is None and root.id in vars(builtins)
                    and root.id not in self.ctx.defined):
                return "builtin"
        return None

    def foreign(self, obj: ast.expr, attr: str) -> str | None:
        """Why writing ``attr`` into ``obj`` is not allowed, None when it is."""
        if attr in CTYPES_PROTOCOL:
            return None
        if isinstance(obj, ast.Attribute):
            root: ast.expr = obj
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in self.ctx.defined | self.local_classes \
                    and not any(root.id in facts.assigned for facts in self.lookup[:-1]):
                return None
            if self.made_here(obj):
                return None
            return "an attribute of another object"
        if not isinstance(obj, ast.Name):
            return "an object made elsewhere"
        name = obj.id
        if name in self.selves:
            return None
        for facts in self.lookup:
            if name in facts.defined and name not in facts.assigned:
                return None
            values = facts.assigned.get(name)
            if values is None:
                continue
            for value in values:
                if isinstance(value, ast.arg):
                    if self.typed(value.annotation) is None:
                        return "a parameter"
                elif value is None:
                    return "an unpacked or loop value"
                elif self.made_here(value) is None:
                    return f"assigned from {ast.unparse(value)[:60]}"
            return None
        binding = self.ctx.bound.get(name)
        if binding is not None:
            if binding.attr is None:
                if (binding.module, attr) in STDLIB_HOOKS:
                    return None
                return f"the module {binding.module}"
            return f"{binding.attr} of {binding.module}"
        return "a name this module does not make"


def _written_object(node: ast.AST) -> Iterator[tuple[ast.expr, str]]:
    """(object, attribute or how) of each attribute write of a statement or call node."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = list(node.targets)
    elif isinstance(node, ast.Call):
        func = node.func
        if (isinstance(func, ast.Name) and func.id in ("setattr", "delattr")
                and node.args):
            yield node.args[0], f"{func.id}(…)"
        elif isinstance(func, ast.Attribute) and func.attr == "__setattr__" and node.args:
            yield node.args[0], "__setattr__(…)"
        elif (isinstance(func, ast.Attribute) and func.attr == "update"
              and isinstance(func.value, ast.Attribute) and func.value.attr == "__dict__"):
            yield func.value.value, "__dict__.update(…)"
        return
    stack = targets
    while stack:
        target = stack.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            stack.extend(target.elts)
        elif isinstance(target, ast.Starred):
            stack.append(target.value)
        elif isinstance(target, ast.Attribute):
            yield target.value, target.attr
        elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute)
              and target.value.attr == "__dict__"):
            yield target.value.value, "__dict__[…]"


def _scopes(tree: ast.Module) -> Iterator[tuple[ast.AST, list[ast.AST]]]:
    """Each function scope of ``tree`` (and the module) with the chain of its enclosing
    nodes (classes and functions), outermost first."""
    def walk(node: ast.AST, chain: list[ast.AST]) -> Iterator[tuple[ast.AST, list[ast.AST]]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES):
                yield child, chain
                yield from walk(child, [*chain, child])
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, [*chain, child])
            else:
                yield from walk(child, chain)

    yield tree, []
    yield from walk(tree, [])


def _qualname(scope: ast.AST, chain: list[ast.AST]) -> str:
    names = [getattr(n, "name", "<lambda>") for n in [*chain, scope]
             if not isinstance(n, ast.Module)]
    return ".".join(names) or "<module>"


def foreign_writes(package: Package) -> list[Site]:
    """Attribute writes on objects the writing module did not make (rules in the module
    docstring)."""
    found: list[Site] = []
    for module in package.modules.values():
        bound = {name: binding for _, name, binding in bindings(package, module)}
        ctx = _Context(
            bound,
            frozenset(n.name for n in module.nodes if isinstance(n, ast.ClassDef)),
            {n.name: n for n in module.tree.body
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))},
            frozenset())
        tables: dict[int, _Facts] = {}
        held: dict[int, dict[str, list[ast.expr]]] = {}
        for scope, chain in _scopes(module.tree):
            tables[id(scope)] = _facts(scope)
            if isinstance(scope, ast.Module):
                ctx = replace(ctx, defined=tables[id(scope)].defined)
            selves: set[str] = set()
            owner: ast.ClassDef | None = None
            for outer, inner in zip([*chain, scope], [*chain, scope][1:], strict=False):
                if isinstance(outer, ast.ClassDef) and isinstance(
                        inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    arguments = inner.args.posonlyargs + inner.args.args
                    if arguments:
                        selves.add(arguments[0].arg)
                        owner = outer
            if owner is not None and id(owner) not in held:
                held[id(owner)] = _self_attributes(owner)
            state = _Scope(
                ctx, frozenset(selves),
                tuple(tables[id(s)] for s in reversed([module.tree, *chain, scope])
                      if id(s) in tables),
                {} if owner is None else held[id(owner)])
            for node, obj, attr in tables[id(scope)].writes:
                why = state.foreign(obj, attr)
                if why is None:
                    continue
                where = _qualname(scope, chain)
                text = (f"{where}: {attr} on {ast.unparse(obj)}" if attr.endswith(")")
                        else f"{where}: {ast.unparse(obj)}.{attr} = …")
                found.append(Site(module.name, module.path, getattr(node, "lineno", 0),
                                  f"{text} ({why})"))
    return sorted(set(found), key=lambda s: (s.path, s.line, s.what))


def _self_attributes(cls: ast.ClassDef) -> dict[str, list[ast.expr]]:
    """attr → the values the methods of ``cls`` assign to ``<first parameter>.attr``."""
    found: dict[str, list[ast.expr]] = {}
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = method.args.posonlyargs + method.args.args
        if not arguments:
            continue
        me = arguments[0].arg
        for node in ast.walk(method):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                            and target.value.id == me):
                        if node.value is not None:
                            found.setdefault(target.attr, []).append(node.value)
    return found


# --- packaging --------------------------------------------------------------------------------

def pyproject(root: Path) -> dict[str, Any]:
    """pyproject.toml of the repository at ``root``."""
    with (root / "pyproject.toml").open("rb") as handle:
        loaded: dict[str, Any] = tomllib.load(handle)
    return loaded


def unshipped_packages(root: Path) -> list[str]:
    """Packages under lagsim/ (a folder with ``__init__.py``) missing from ``[tool.setuptools]
    packages``, folders of ``.py`` files without ``__init__.py`` (a non-editable install would
    leave them out) and listed packages with no folder."""
    setuptools = pyproject(root)["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    folders = setuptools.get("package-dir", {})
    problems = []
    for init in sorted((root / PACKAGE).rglob("__init__.py")):
        name = ".".join(init.parent.relative_to(root).parts)
        if name not in listed:
            problems.append(f"{name} (lagsim/{init.parent.relative_to(root / PACKAGE)}) is "
                            "not in [tool.setuptools] packages")
    for folder in sorted({p.parent for p in (root / PACKAGE).rglob("*.py")}):
        if not (folder / "__init__.py").exists():
            problems.append(f"{folder.relative_to(root)} has modules but no __init__.py")
    for name in sorted(listed):
        folder = folders.get(name, name.replace(".", "/"))
        if not (root / folder / "__init__.py").exists() and not (root / folder).is_dir():
            problems.append(f"{name} is listed but {folder}/ does not exist")
    return problems


def unshipped_data(root: Path, package: str = "lagsim.numeric", folder: str = "c") -> list[str]:
    """Files of ``<package>/<folder>/`` that no ``[tool.setuptools.package-data]`` pattern of
    ``package`` matches."""
    patterns = pyproject(root)["tool"]["setuptools"].get("package-data", {}).get(package, [])
    base = root / package.replace(".", "/")
    return [path.relative_to(root).as_posix()
            for path in sorted((base / folder).rglob("*")) if path.is_file()
            and "__pycache__" not in path.parts
            and not any(fnmatch.fnmatch(path.relative_to(base).as_posix(), pattern)
                        for pattern in patterns)]


# --- sizes ------------------------------------------------------------------------------------

BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With,
            ast.AsyncWith, ast.comprehension)
"""What :func:`branches` counts, each once, besides the operators of ``and``/``or`` chains."""


def branches(node: ast.AST) -> int:
    """Branch points in ``node`` (nested functions included): if, conditional expression,
    for, while, try, with, each ``for`` of a comprehension, and each ``and``/``or``
    (``a and b and c`` counts 2)."""
    count = 0
    for sub in ast.walk(node):
        if isinstance(sub, BRANCHES) or (hasattr(ast, "TryStar")
                                          and isinstance(sub, ast.TryStar)):
            count += 1
        elif isinstance(sub, ast.BoolOp):
            count += len(sub.values) - 1
    return count


@dataclass(frozen=True)
class Function:
    """A function or method: where it is, its lines (def to last line) and branches."""

    module: str
    path: str
    name: str
    line: int
    lines: int
    branches: int


def functions(package: Package) -> list[Function]:
    """Every function and method of the package."""
    found = []
    for module in package.modules.values():
        for scope, chain in _scopes(module.tree):
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                end = scope.end_lineno or scope.lineno
                found.append(Function(module.name, module.path, _qualname(scope, chain),
                                      scope.lineno, end - scope.lineno + 1, branches(scope)))
    return found


def any_parameters(package: Package, under: str) -> list[Site]:
    """Parameters annotated ``Any`` (``Any``, ``typing.Any``, ``"Any"``, ``Any | None``) of
    functions in modules under ``under``."""
    def is_any(annotation: ast.expr | None) -> bool:
        if annotation is None:
            return False
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return False
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            return any(is_any(side) for side in (annotation.left, annotation.right)
                       if not (isinstance(side, ast.Constant) and side.value is None))
        return (isinstance(annotation, ast.Name) and annotation.id == "Any") or (
            isinstance(annotation, ast.Attribute) and annotation.attr == "Any")

    found = []
    for module in package.modules.values():
        if not (module.name == under or module.name.startswith(under + ".")):
            continue
        for node in module.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = node.args
                for arg in (arguments.posonlyargs + arguments.args + arguments.kwonlyargs
                            + [a for a in (arguments.vararg, arguments.kwarg) if a]):
                    if is_any(arg.annotation):
                        found.append(Site(module.name, module.path, arg.lineno,
                                          f"{node.name}({arg.arg}: Any)"))
    return found
