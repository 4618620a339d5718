"""Agent import (``module:callable`` or ``file.py:callable``) and opening a factory's agent.

A factory is a plain function, an ``async def`` (awaited: the style of the
langchain-mcp-adapters README, which opens MCP sessions first), or an async generator (its
``yield`` gives the agent). What it returns may be a context manager, sync or async, whose
entered value is the agent; it is closed after the scenario's runs (:func:`open_agent`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import sys
import types
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from harness.scenarios.issues import describe_found, suggest
from harness.scenarios.model import AgentRef

_file_modules: dict[Path, types.ModuleType] = {}

T = TypeVar("T")


def resolve_agent(spec: str, base: Path) -> AgentRef:
    """Import ``module:callable`` (from cwd or ``base``) or ``file.py:callable`` (from ``base``)."""
    factory = resolve_callable(
        spec,
        base,
        role="it must be a factory taking model= and returning a Runnable or compiled graph",
    )
    return AgentRef(spec, factory)


def resolve_callable(spec: str, base: Path, *, role: str) -> Callable[..., Any]:
    """The callable ``module:callable`` or ``file.py:callable`` names (``agent:``, ``model:``);
    a ValueError says what is missing, with a did-you-mean, and ``role`` when it is no callable."""
    module_part, attr = _split_spec(spec)
    module = (
        _import_file(module_part, base)
        if module_part.endswith(".py")
        else _import_module(module_part, base)
    )
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            names = [n for n in dir(target) if not n.startswith("_")]
            raise ValueError(
                f"module '{module_part}' has no attribute '{part}'{suggest(part, names)}"
            )
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"'{spec}' is not callable (it is {describe_found(target)}); {role}")
    return cast("Callable[..., Any]", target)


def named_agent(spec: str) -> AgentRef:
    """``spec`` checked but not imported: a suite loaded only to score traces (eval-traces).

    Traces are scored where the agent may not even be installed (a job reading a Collector's
    files), and importing it would load LangChain for nothing.
    """
    _split_spec(spec)
    return AgentRef(spec, functools.partial(_not_imported, spec))  # picklable, for workers


def _not_imported(spec: str, *_args: Any, **_kwargs: Any) -> Any:
    """The factory of a :func:`named_agent`: never called by the commands that load one."""
    from harness.errors import ScenarioRunError

    raise ScenarioRunError(
        f"agent {spec} was not imported: its suite was loaded to score traces, not to run; "
        "load it with harness.scenarios.load_paths(paths) to run it"
    )


def _split_spec(spec: str) -> tuple[str, str]:
    """``module:callable`` -> (module, callable); ValueError names the expected forms."""
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        raise ValueError(
            f"expected 'module:callable' or 'path/to/file.py:callable', found {spec!r}"
        )
    return module_part, attr


SyncCall = Callable[..., Awaitable[Any]]
"""How the runner calls a sync factory (on a worker thread): ``call(factory, model=...)``."""


async def open_agent(
    factory: Callable[..., Any],
    model: Any,
    stack: contextlib.AsyncExitStack,
    call_sync: SyncCall,
) -> Any:
    """Build the agent: await an async factory, enter a returned context manager on ``stack``.

    ``call_sync`` runs a plain factory (the runner runs it on a daemon thread); coroutine and
    async-generator factories run on the event loop, where their sessions belong.
    """
    if inspect.isasyncgenfunction(factory):
        return await stack.enter_async_context(contextlib.asynccontextmanager(factory)(model=model))
    if inspect.iscoroutinefunction(factory):
        built = await factory(model=model)
    else:
        built = await call_sync(factory, model=model)
        if inspect.isawaitable(built):  # a callable object whose __call__ is async
            built = await built
    return await enter_agent(built, stack)


async def enter_agent(built: Any, stack: contextlib.AsyncExitStack) -> Any:
    """The agent a factory's return value stands for: a context manager is entered on
    ``stack`` (closed with it), anything else is the agent itself."""
    if _is_agent(built):
        return built
    if hasattr(built, "__aenter__") and hasattr(built, "__aexit__"):
        return await stack.enter_async_context(built)
    if hasattr(built, "__enter__") and hasattr(built, "__exit__"):
        return stack.enter_context(built)
    return built


def _is_agent(value: Any) -> bool:
    # a Runnable or compiled graph is the agent even if some subclass grew __enter__
    return callable(getattr(value, "invoke", None)) or callable(getattr(value, "ainvoke", None))


class _HoldingStack(contextlib.AsyncExitStack):
    """An exit stack that knows whether a context manager was entered on it (then the session
    must stay open until closed; otherwise there is nothing to close)."""

    holds = False

    async def enter_async_context(self, cm: contextlib.AbstractAsyncContextManager[T]) -> T:
        """Enter ``cm`` and remember that something is held."""
        self.holds = True
        return await super().enter_async_context(cm)

    def enter_context(self, cm: contextlib.AbstractContextManager[T]) -> T:
        """Enter ``cm`` and remember that something is held."""
        self.holds = True
        return super().enter_context(cm)


class AgentSession:
    """One opened agent, owned by one task from factory to close.

    Async context managers (MCP sessions, anyio task groups) must be exited by the task that
    entered them, so a private owner task opens the agent, holds it while the runs use it
    from their own tasks, and closes it when :meth:`close` is called.
    """

    def __init__(self, factory: Callable[..., Any], model: Any, call_sync: SyncCall) -> None:
        """Keep what to open; nothing runs until :meth:`open`."""
        self.factory = factory
        self.model = model
        self.call_sync = call_sync
        self._task: asyncio.Future[None] | None = None
        self._ready: asyncio.Future[Any] | None = None
        self._release = asyncio.Event()

    async def open(self) -> Any:
        """Build (and enter) the agent in the owner task; what the factory raises, raises."""
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._task = asyncio.ensure_future(self._own(self._ready))
        try:
            return await asyncio.shield(self._ready)
        except asyncio.CancelledError:
            self._task.cancel()
            raise

    @property
    def needs_closing(self) -> bool:
        """Is the owner task still holding something :meth:`close` must close?

        False for a plain agent (nothing entered) or a failed open: the owner task has already
        ended, so the runner skips its bounded close call.
        """
        return self._task is not None and not self._task.done()

    async def _own(self, ready: asyncio.Future[Any]) -> None:
        async with _HoldingStack() as stack:
            try:
                agent = await open_agent(self.factory, self.model, stack, self.call_sync)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # SystemExit from a factory is that scenario's error
                if not ready.done():
                    ready.set_exception(exc)
                return
            if not ready.done():
                ready.set_result(agent)
            if stack.holds:  # a plain agent has nothing to close: the owner task ends now
                await self._release.wait()

    async def close(self) -> None:
        """Close what the factory opened (a no-op for a plain agent); its errors raise here."""
        if self._task is None:
            return
        self._release.set()
        task, self._task = self._task, None
        if not task.cancelled():
            await task


def build_agent_sync(factory: Callable[..., Any], model: Any) -> tuple[Any, Callable[[], None]]:
    """Build an agent outside any event loop (``harness validate``): ``(agent, close)``.

    Async factories run on a private loop that stays open until ``close()``, so a session they
    opened is still usable while the caller reads the agent.
    """
    loop = asyncio.new_event_loop()

    async def call_sync(func: Callable[..., Any], **kwargs: Any) -> Any:
        return func(**kwargs)

    session = AgentSession(factory, model, call_sync)

    def close() -> None:
        try:
            loop.run_until_complete(session.close())
        finally:
            loop.close()

    try:
        agent = loop.run_until_complete(session.open())
    except BaseException:
        close()
        raise
    return agent, close


def _import_module(name: str, base: Path) -> types.ModuleType:
    roots = [str(Path.cwd()), str(base)]
    added = [root for root in roots if root not in sys.path]
    sys.path[:0] = added
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or name
        raise ValueError(
            f"cannot import module '{name}': no module named '{missing}' "
            f"(looked in the current directory {roots[0]} and {roots[1]})"
        ) from None
    except Exception as exc:
        raise ValueError(f"importing module '{name}' raised {type(exc).__name__}: {exc}") from None
    finally:
        for root in added:
            if root in sys.path:
                sys.path.remove(root)


def _import_file(relative: str, base: Path) -> types.ModuleType:
    path = (base / relative).resolve()
    cached = _file_modules.get(path)
    if cached is not None:
        return cached
    if not path.is_file():
        siblings = [p.name for p in path.parent.glob("*.py")] if path.parent.is_dir() else []
        raise ValueError(
            f"cannot import '{relative}': no such file {path}{suggest(path.name, siblings)}"
        )
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    name = f"_harness_agent_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import '{relative}': not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pydantic look their module up here
    # the file's folder, the current directory and the suite's folder, as for module:callable:
    # an agent file may import the user's own packages
    roots = [str(path.parent), str(Path.cwd()), str(base)]
    added = [root for root in dict.fromkeys(roots) if root not in sys.path]
    sys.path[:0] = added
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as exc:
        sys.modules.pop(name, None)
        missing = exc.name or str(exc)
        raise ValueError(
            f"importing '{relative}' raised ModuleNotFoundError: no module named '{missing}' "
            f"(looked in {', '.join(dict.fromkeys(roots))} and the installed packages)"
        ) from None
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ValueError(f"importing '{relative}' raised {type(exc).__name__}: {exc}") from None
    finally:
        for root in added:
            if root in sys.path:
                sys.path.remove(root)
    _file_modules[path] = module
    return module
