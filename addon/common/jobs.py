"""Long operators that run like Blender's own: progress in the status bar, Esc cancels, the file as it was.

An operator built on :class:`JobOperator` splits its work in three:

1. ``prepare(context)`` on the main thread: checks the input and reads what it needs from Blender
   into plain data, writing nothing; returns a :class:`Task` (or ``{'CANCELLED'}`` after a report).
   Reads too long for one go (files through Blender's importers) are the task's ``reads``: steps on
   the main thread, one per timer tick, with progress and Esc between them, before the work starts.
2. ``Task.work(progress)``: the core's pure work (numpy, no bpy), in a worker thread when invoked
   from the user interface. ``progress(fraction)`` records the share done (0–1) and raises
   :class:`Cancelled` once the user cancelled, so the work stops at its next call.
3. ``Task.finish(context, result)`` on the main thread once the work is done: writes to Blender,
   reports, returns ``{'FINISHED'}``. Writes too long for one go (keys fitted on Blender's own
   evaluation, pass by pass) make ``finish`` a generator: each ``next`` one step yielding the share of
   writing done (0–1), its return value the result; modal, a step a timer tick, with progress and Esc
   between them (the file put back, :class:`.guard.Changes`).

Invoked with a window, the operator runs modal: a window-manager timer polls the worker, the status
bar shows a progress bar and the area's header the step and the share done, Esc or right-click
cancels (view navigation still works; every other event is held, so nothing edits the scene). Cancelled
or failed, nothing was written (the worker's result is dropped) and the operator returns
``{'CANCELLED'}`` with a report; the finish (each of its write steps) runs under the file's
:class:`.guard.Changes`, so a failure or Esc while writing puts the file back as well. In the background (``bpy.app.background``), with
no window, or through ``EXEC_DEFAULT`` (scripts, tests, the redo panel) the same three steps run at
once in ``execute``. A worker whose core does not call ``progress`` for a while finishes that stretch
on its own after a cancel (a daemon thread); its result is never written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import bpy

from .guard import error_message, guarded_call, reported_errors, settle, take_changes

Progress = Callable[[float], None]
POLL_SECONDS = 0.1  # how often the timer looks at the worker
CANCEL_EVENTS = {"ESC", "RIGHTMOUSE"}
# Events the view still gets while the job runs (looking around changes nothing); every other is held.
VIEW_EVENTS = {"MOUSEMOVE", "INBETWEEN_MOUSEMOVE", "MIDDLEMOUSE", "WHEELUPMOUSE", "WHEELDOWNMOUSE", "TRACKPADPAN",
               "TRACKPADZOOM", "MOUSEROTATE", "MOUSESMARTZOOM", "NDOF_MOTION"}  # fmt: skip


class Cancelled(BaseException):
    """Raised by a job's ``progress`` once the user cancelled (a BaseException, as KeyboardInterrupt is,
    so that no ``except Exception`` in the work swallows it)."""


@dataclass
class Task:
    """An operator's work after its reads: ``work(progress) -> result`` touches no Blender data;
    ``finish(context, result) -> {'FINISHED'}`` writes it. label: what the status bar says.

    reads: main-thread steps before the work (None: none), each ``next`` one read that leaves the
    scene as it was (an import read and removed again), yielding the share of reading done (0–1);
    closed when cancelled. read_share: the part of the progress bar the reads fill (0–1).
    write_share: the part a ``finish`` that is a generator of write steps fills, at the end (0–1).
    """

    work: Callable[[Progress], Any]
    finish: Callable[[Any, Any], set[str] | Generator[float, None, set[str]]]
    label: str = "Working"
    reads: Iterator[float] | None = None
    read_share: float = 0.0
    write_share: float = 0.0


class Job:
    """``work(progress)`` run once, in a worker thread (:meth:`start`) or at once (:meth:`run`).

    fraction: the share done the work last reported (0–1). progress(fraction) raises :class:`Cancelled`
    after :meth:`cancel`; ``on_progress`` (optional) is called with each fraction in the caller's thread.
    """

    def __init__(
        self,
        work: Callable[[Progress], Any],
        on_progress: Progress | None = None,
        span: tuple[float, float] = (0.0, 1.0),
    ) -> None:
        self._work = work
        self._on_progress = on_progress
        self._span = span  # the part of the bar the work fills (after a task's reads)
        self.fraction = span[0]
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._result: Any = None
        self._error: BaseException | None = None
        self.thread: threading.Thread | None = None

    def progress(self, fraction: float) -> None:
        """What the work calls with its share done; raises :class:`Cancelled` once cancelled."""
        if self._cancel.is_set():
            raise Cancelled
        low, high = self._span
        self.fraction = low + (high - low) * min(max(float(fraction), 0.0), 1.0)
        if self._on_progress is not None:
            self._on_progress(self.fraction)

    def _run(self) -> None:
        try:
            self._result = self._work(self.progress)
        except BaseException as exc:  # noqa: BLE001 (handed to the thread that reads the result)
            self._error = exc
        finally:
            self._done.set()

    def start(self) -> Job:
        """Run the work in a daemon thread (a cancelled job left running never holds Blender open)."""
        self.thread = threading.Thread(target=self._run, name="Mocap Workbench job", daemon=True)
        self.thread.start()
        return self

    def run(self) -> Any:
        """Run the work here and now; its result, or its exception raised."""
        self._run()
        return self.result()

    def cancel(self) -> None:
        """Ask the work to stop: its next ``progress`` call raises :class:`Cancelled`."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        """The work returned or raised (or was cancelled at a ``progress`` call)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the work is done (at most ``timeout`` seconds); whether it is."""
        return self._done.wait(timeout)

    def result(self) -> Any:
        """The work's result; its exception raised if it failed (:class:`Cancelled` if cancelled)."""
        if not self.done:
            raise RuntimeError("the job is still running")
        if self._error is not None:
            raise self._error
        return self._result


def run_now(task: Task, context: Any) -> set[str]:
    """Run ``task`` at once on this thread with Blender's progress indicator: reads, work, then finish."""
    wm = context.window_manager
    wm.progress_begin(0, 100)
    try:
        for share in task.reads or ():
            wm.progress_update(int(100 * task.read_share * share))
        result = Job(task.work, lambda x: wm.progress_update(int(100 * x)), _work_span(task)).run()
        finished = task.finish(context, result)
        if isinstance(finished, Generator):
            finished = drain(finished, lambda x: wm.progress_update(int(100 * _write_fraction(task, x))))
    finally:
        wm.progress_end()
    return finished


def drain(steps: Generator[float, None, Any], on_step: Callable[[float], None] | None = None) -> Any:
    """Run a generator of steps to its end (``on_step`` given each share it yields, then 1 once it has
    ended: a generator need not spend a step on saying it is done); its return value."""
    while True:
        try:
            share = next(steps)
        except StopIteration as stop:
            if on_step is not None:
                on_step(1.0)
            return stop.value
        if on_step is not None:
            on_step(share)


def scaled(steps: Generator[float, None, Any], low: float, high: float) -> Generator[float, None, Any]:
    """``steps`` (a generator of steps yielding shares 0–1) with its shares mapped onto ``low``–``high``, for a
    part of a longer generator (``yield from``); returns its return value and closes it when closed."""
    try:
        while True:
            try:
                share = next(steps)
            except StopIteration as stop:
                return stop.value
            yield low + (high - low) * share
    finally:
        steps.close()


def _work_span(task: Task) -> tuple[float, float]:
    return (task.read_share if task.reads is not None else 0.0, 1.0 - task.write_share)


def _write_fraction(task: Task, share: float) -> float:
    return 1.0 - task.write_share * (1.0 - min(max(float(share), 0.0), 1.0))


def status_text(task: Task, fraction: float) -> str:
    """What the area's header says while ``task`` runs."""
    return f"{task.label}: {fraction:.0%}    Esc or right-click to cancel"


def status_bar(task: Task, job: Job) -> Callable[[Any, Any], None]:
    """What the status bar draws while ``task`` runs (``WorkSpace.status_text_set`` takes a draw
    function): a progress bar with the share done, then the keys that cancel, as Blender's own
    modal tools show them."""

    def draw(header: Any, _context: Any) -> None:
        row = header.layout.row(align=True)
        row.progress(factor=job.fraction, type="BAR", text=f"{task.label}: {job.fraction:.0%}")
        row.separator()
        row.label(text="", icon="EVENT_ESC")
        row.label(text="", icon="MOUSE_RMB")
        row.label(text="Cancel")

    return draw


def start(operator: Any, context: Any) -> set[str]:
    """What an operator's ``invoke`` returns: the job modal when there is a window to show it, else
    ``operator.execute(context)`` (background, scripts)."""
    if bpy.app.background or getattr(context, "window", None) is None:
        return operator.execute(context)
    return operator.start_job(context)


class JobOperator:
    """Mixin for an operator whose work is long (module notes): define ``prepare(context)`` returning a
    :class:`Task` or ``{'CANCELLED'}``, call :func:`start` from ``invoke``; ``execute`` runs it at once."""

    def prepare(self, context: Any) -> Task | set[str]:
        raise NotImplementedError

    @reported_errors
    def execute(self, context: Any) -> set[str]:
        task = self.prepare(context)
        return task if isinstance(task, set) else run_now(task, context)

    # --- modal ------------------------------------------------------------------------------

    def start_job(self, context: Any) -> set[str]:
        """Prepare on the main thread, start the work in a worker, poll it from a timer."""
        try:
            task = self.prepare(context)  # reads only: nothing to put back on failure
        except Exception as exc:  # noqa: BLE001 (every failure becomes a report)
            self.report({"ERROR"}, error_message(exc))
            return {"CANCELLED"}
        if isinstance(task, set):
            return task
        self._task, self._job = task, Job(task.work, span=_work_span(task))
        self._writes, self._changes = None, None  # the finish's write steps, and what they may change
        self._reading = task.reads is not None  # the reads go first, a step a timer tick
        if not self._reading:
            self._job.start()
        wm = context.window_manager
        self._timer = wm.event_timer_add(POLL_SECONDS, window=context.window)
        wm.modal_handler_add(self)
        wm.progress_begin(0, 100)
        self._show(context, status_text(task, 0.0), status_bar(task, self._job))
        return {"RUNNING_MODAL"}

    def modal(self, context: Any, event: Any) -> set[str]:
        job, task = self._job, self._task
        if event.type in CANCEL_EVENTS and event.value == "PRESS":
            job.cancel()
            self._end(context)
            self.report({"WARNING"}, f"{task.label} cancelled: nothing changed")
            return {"CANCELLED"}
        if self._reading and event.type == "TIMER":
            return self._read_step(context)
        if self._writes is not None and event.type == "TIMER":
            return self._write_step(context)
        if job.done and self._writes is None:
            return self._finished(context)
        if event.type == "TIMER":
            context.window_manager.progress_update(int(100 * job.fraction))
            self._show(context, status_text(task, job.fraction), status_bar(task, job))  # redrawn
            return {"RUNNING_MODAL"}
        return {"PASS_THROUGH"} if event.type in VIEW_EVENTS else {"RUNNING_MODAL"}

    def _read_step(self, context: Any) -> set[str]:
        """One of the task's reads; the work starts once they are done. A failing read ends the job."""
        task, job = self._task, self._job
        try:
            job.fraction = task.read_share * min(max(float(next(task.reads)), 0.0), 1.0)
        except StopIteration:
            self._reading = False
            job.start()
        except Exception as exc:  # noqa: BLE001 (every failure becomes a report; the reads put back their own)
            self._end(context)
            self.report({"ERROR"}, error_message(exc))
            return {"CANCELLED"}
        context.window_manager.progress_update(int(100 * job.fraction))
        self._show(context, status_text(task, job.fraction), status_bar(task, job))
        return {"RUNNING_MODAL"}

    def cancel(self, context: Any) -> None:
        """Blender ends the operator (the window closes, a file loads): stop the work, write nothing."""
        job = getattr(self, "_job", None)
        if job is not None:
            job.cancel()
            self._end(context)

    def _finished(self, context: Any) -> set[str]:
        """The work is done: ``finish`` writes at once, or returns its write steps, then run a timer tick each."""
        changes = take_changes(self, context)
        if changes is None:
            self._end(context)
            return {"CANCELLED"}
        outcome = guarded_call(self, changes, lambda: self._task.finish(context, self._job.result()))  # work's error
        if not isinstance(outcome, Generator):
            self._end(context)
            return settle(changes, outcome)
        self._writes, self._changes = outcome, changes
        return {"RUNNING_MODAL"}

    def _write_step(self, context: Any) -> set[str]:
        """One of the finish's write steps; a failing one puts the file back and ends the job with its error."""
        done = []

        def step() -> float:
            try:
                return next(self._writes)
            except StopIteration as stop:
                done.append(stop.value)
                return 1.0

        share = guarded_call(self, self._changes, step)
        if done or isinstance(share, set):
            changes, self._writes = self._changes, None
            self._end(context)
            return settle(changes, done[0] if done else share)
        self._job.fraction = _write_fraction(self._task, share)
        context.window_manager.progress_update(int(100 * self._job.fraction))
        self._show(context, status_text(self._task, self._job.fraction), status_bar(self._task, self._job))
        return {"RUNNING_MODAL"}

    def _end(self, context: Any) -> None:
        reads = getattr(getattr(self, "_task", None), "reads", None)
        if reads is not None and hasattr(reads, "close"):
            reads.close()  # a generator's cleanup runs (a read left half done is put back)
        writes, self._writes = getattr(self, "_writes", None), None
        if writes is not None:  # cancelled between write steps: the step's cleanup runs, the file is put back
            writes.close()
            settle(self._changes, {"CANCELLED"})
        wm = context.window_manager
        timer, self._timer = getattr(self, "_timer", None), None
        if timer is not None:
            wm.event_timer_remove(timer)
        wm.progress_end()
        self._show(context, None)

    @staticmethod
    def _show(context: Any, text: str | None, bar: Callable | None = None) -> None:
        """The header's text and the status bar's drawing (None: Blender's own again)."""
        workspace, area = getattr(context, "workspace", None), getattr(context, "area", None)
        if workspace is not None:
            workspace.status_text_set(bar)
        if area is not None:
            area.header_text_set(text)
