"""Long operators run like Blender's own (issue #12 item 6, #16 item 3): the core in a worker thread,
progress in the status bar, Esc or right-click cancels, the scene exactly as it was after a cancel or a
failure, the same keys as the synchronous path.

Headless Blender has no event loop, so ``bpy.ops`` never runs an operator modal: the job and its
thread are tested with the real core, and the operator's ``start_job``/``modal`` are driven with
stand-in events on a stand-in operator that carries the registered operator's own ``prepare``."""

import threading
from importlib import import_module
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.blender.test_retarget import key_snapshot, select_pair, walk_armature

jobs = import_module(PACKAGE + ".addon.common.jobs")
animdata = import_module(PACKAGE + ".addon.common.animdata")
armature = import_module(PACKAGE + ".addon.common.armature")
extract_action = import_module(PACKAGE + ".addon.keyframes.extract_action")
retarget_action = import_module(PACKAGE + ".addon.retarget.retarget_action")
keyframe_operators = import_module(PACKAGE + ".addon.keyframes.operators")
synthetic = import_module(PACKAGE + ".core.synthetic")
PhysicsSettings = import_module(PACKAGE + ".core.physics.apply").PhysicsSettings


def walk_pair(frames=72):
    """A synthetic walk (60 fps) and a copy of it to retarget onto, selected as Retarget wants them."""
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.0
    source, target = (armature.create_animated_armature(synthetic.walk(frames), n, scene.collection)
                      for n in ("Walk", "Target"))  # fmt: skip
    select_pair(source, target)
    return source, target


def make_rig(name="Mocap"):
    obj = armature.create_animated_armature(synthetic.demo_clip(), name, bpy.context.scene.collection)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def scene_state(*objs):
    """What a cancelled or failed run must leave as it was: the file's actions and images, each object's
    action and the keys of every action."""
    return (
        {a.as_pointer() for a in bpy.data.actions},
        {i.as_pointer() for i in bpy.data.images},
        [o.animation_data.action for o in objs],
        {a.name: key_snapshot_of(a) for a in bpy.data.actions},
    )


def key_snapshot_of(action):
    """Every key (frame, value) of an action, whatever its slots and layers."""
    out = {}
    for curves in animdata.curve_lists(action):  # Action.fcurves on 4.2, else each channel bag's
        for fc in curves:
            keys = np.empty(2 * len(fc.keyframe_points))
            fc.keyframe_points.foreach_get("co", keys)
            out[(fc.data_path, fc.array_index)] = keys
    return out


def same_state(a, b) -> bool:
    if a[:3] != b[:3] or a[3].keys() != b[3].keys():
        return False
    return all(a[3][n].keys() == b[3][n].keys() and all(np.array_equal(a[3][n][k], b[3][n][k]) for k in a[3][n])
               for n in a[3])  # fmt: skip


# --- the job: the core in a worker thread --------------------------------------------------------


def test_the_core_runs_in_a_worker_and_writes_the_keys_the_synchronous_path_writes():
    obj = make_rig("Threaded")
    before = scene_state(obj)
    prepared = extract_action.prepare_extraction(obj, "hybrid", {"count": 12})
    assert same_state(scene_state(obj), before)  # reading wrote nothing
    ran_in = []
    job = jobs.Job(lambda progress: (ran_in.append(threading.current_thread()), prepared.work(progress))[1])
    job.start()
    assert job.wait(120)
    assert ran_in == [job.thread] and job.thread is not threading.main_thread()
    assert same_state(scene_state(obj), before)  # the worker wrote nothing
    threaded = prepared.write(job.result())
    reference = make_rig("Synchronous")
    synchronous = extract_action.extract_on_armature(reference, "hybrid", {"count": 12})
    assert threaded.params["stored_keys"] == synchronous.params["stored_keys"] > 0
    assert threaded.error["position_max"] == pytest.approx(synchronous.error["position_max"], rel=1e-9)
    ours, theirs = key_snapshot(obj), key_snapshot(reference)
    assert ours.keys() == theirs.keys() and all(np.allclose(ours[k], theirs[k]) for k in ours)
    assert obj.animation_data.action.name == threaded.result_action != before[2][0].name


def test_a_cancelled_extraction_stops_at_its_next_progress_call_and_writes_nothing():
    obj = make_rig()
    before = scene_state(obj)
    prepared = extract_action.prepare_extraction(obj, "hybrid", {"ratio": 0.1})
    calls = []
    job = jobs.Job(prepared.work, calls.append)
    job.cancel()  # before the core's first progress call
    job.start()
    assert job.wait(120) and job.cancelled
    job.thread.join(10)  # the done event is set just before the thread returns
    assert not job.thread.is_alive()
    with pytest.raises(jobs.Cancelled):
        job.result()
    assert calls == []  # stopped at the first call: no share recorded after the cancel
    assert same_state(scene_state(obj), before)


def test_a_cancelled_physics_retarget_stops_mid_run_and_writes_nothing():
    """Cancelled at the physics' first report, it stops at its next one, long before its end, and
    nothing reaches the file."""
    source, target = walk_pair()
    before = scene_state(source, target)
    settings = PhysicsSettings(target_mass=90.0, target_height=1.99, source_mass=60.0)
    prepared = retarget_action.prepare_retarget(source, target, physics=settings)
    seen = []

    def on_progress(fraction):
        seen.append(fraction)
        if fraction > 0.3:  # the retarget is done, the physics has begun (0.3–0.9 of the work)
            job.cancel()

    job = jobs.Job(prepared.work, on_progress)
    job.start()
    assert job.wait(300)
    job.thread.join(10)  # the done event is set just before the thread returns
    assert not job.thread.is_alive()
    with pytest.raises(jobs.Cancelled):
        job.result()
    assert sum(f > 0.3 for f in seen) == 1 and seen[-1] < 0.9  # no report after the cancel: stopped there
    assert same_state(scene_state(source, target), before)


# --- the operator's modal run, driven by stand-in events -----------------------------------------


class Recorder:
    """A stand-in for the workspace's status bar and the area's header: records what they are given."""

    def __init__(self):
        self.texts = []

    def status_text_set(self, text):
        self.texts.append(text)

    header_text_set = status_text_set


class Layout:
    """A stand-in for the status bar's layout: records what is drawn."""

    def __init__(self):
        self.calls = []

    def row(self, align=False):
        return self

    def separator(self):
        pass

    def progress(self, factor=0.0, type="BAR", text=""):
        self.calls.append(("progress", factor, type, text))

    def label(self, text="", icon="NONE"):
        self.calls.append(("label", text, icon))


def drawn(bar):
    """What the status bar's draw function draws."""
    layout = Layout()
    bar(SimpleNamespace(layout=layout), bpy.context)
    return layout.calls


class WindowManager:
    """The real window manager (timers, progress), with the modal handler recorded: Blender takes
    only a real operator instance there."""

    def __init__(self):
        self.real = bpy.context.window_manager
        self.handlers, self.timers, self.progress = [], [], []

    def modal_handler_add(self, operator):
        self.handlers.append(operator)
        return True

    def event_timer_add(self, step, window=None):
        timer = self.real.event_timer_add(step, window=window)
        self.timers.append(timer)
        return timer

    def event_timer_remove(self, timer):
        self.timers.remove(timer)
        self.real.event_timer_remove(timer)

    def progress_begin(self, a, b):
        self.progress.append(("begin", a, b))
        self.real.progress_begin(a, b)

    def progress_update(self, value):
        self.progress.append(("update", value))
        self.real.progress_update(value)

    def progress_end(self):
        self.progress.append(("end",))
        self.real.progress_end()


def stand_in_context():
    ctx = bpy.context
    return SimpleNamespace(window_manager=WindowManager(), window=ctx.window, workspace=Recorder(), area=Recorder(),
                           scene=ctx.scene, view_layer=ctx.view_layer, active_object=ctx.active_object,
                           selected_objects=list(ctx.selected_objects), mode=ctx.mode)  # fmt: skip


class Driven(jobs.JobOperator):
    """An operator instance as Blender would make it: the registered class's properties at their
    defaults (or the values given), its own ``prepare`` and ``in_place_actions``, reports recorded."""

    def __init__(self, cls, **values):
        module, name = cls.bl_idname.split(".")
        rna = getattr(getattr(bpy.ops, module), name).get_rna_type()
        self.__dict__.update({p.identifier: p.default for p in rna.properties if hasattr(p, "default")})
        self.__dict__.update(values)
        self.properties, self.reports, self._cls, self._passed = self, [], cls, set(values)

    def is_property_set(self, name):
        return name in self._passed

    def prepare(self, context):
        return self._cls.prepare(self, context)

    def in_place_actions(self, context):
        return self._cls.in_place_actions(self, context) if hasattr(self._cls, "in_place_actions") else []

    def report(self, kind, text):
        self.reports.append((next(iter(kind)), text))


def event(kind, value="NOTHING"):
    return SimpleNamespace(type=kind, value=value)


def run_modal(op, context, events=()):
    """Start the operator's job, send ``events``, then timer events until it ends; its return values."""
    results = [op.start_job(context)]
    assert results == [{"RUNNING_MODAL"}] and context.window_manager.handlers == [op]
    for e in events:
        results.append(op.modal(context, e))
        if results[-1] & {"FINISHED", "CANCELLED"}:
            return results
    while not results[-1] & {"FINISHED", "CANCELLED"}:
        op._job.wait(0.05)
        results.append(op.modal(context, event("TIMER")))
    return results


def test_extract_keyframes_runs_modal_shows_its_progress_and_writes_on_finishing():
    obj = make_rig()
    original = obj.animation_data.action
    context = stand_in_context()
    op = Driven(bpy.types.MOCAP_OT_extract_keyframes, method="UNIFORM", target="COUNT", count=10)
    results = run_modal(op, context)
    assert results[-1] == {"FINISHED"} and all(r == {"RUNNING_MODAL"} for r in results[:-1])
    assert op._job.thread is not threading.main_thread()
    result = obj.animation_data.action
    assert result != original and result.name == f"{original.name}_keys" and original.use_fake_user
    assert op.reports[-1][0] == "INFO" and "Kept 10 of" in op.reports[-1][1]
    assert "Kept 10 of" in context.scene.mocap_workbench.last_report
    headers, bars = context.area.texts, context.workspace.texts
    assert headers[0].startswith("Extracting keyframes: 0%") and "Esc" in headers[0] and headers[-1] is None
    assert len(bars) == len(headers) >= 2 and bars[-1] is None  # the status bar: Blender's own again
    fraction = op._job.fraction
    assert 0 < fraction <= 1 and drawn(bars[0]) == [
        ("progress", fraction, "BAR", f"Extracting keyframes: {fraction:.0%}"),
        ("label", "", "EVENT_ESC"),
        ("label", "", "MOUSE_RMB"),
        ("label", "Cancel", "NONE"),
    ]
    bpy.context.workspace.status_text_set(bars[0])  # Blender takes the draw function
    bpy.context.workspace.status_text_set(None)
    wm = context.window_manager
    assert wm.timers == [] and wm.progress[0] == ("begin", 0, 100) and wm.progress[-1] == ("end",)
    # the same keys as the synchronous path (bpy.ops runs execute headless)
    reference = make_rig("Reference")
    assert bpy.ops.mocap.extract_keyframes(method="UNIFORM", target="COUNT", count=10) == {"FINISHED"}
    ours, theirs = key_snapshot(obj), key_snapshot(reference)
    assert ours.keys() == theirs.keys() and all(np.allclose(ours[k], theirs[k]) for k in ours)


@pytest.mark.parametrize("key", ["ESC", "RIGHTMOUSE"])
def test_esc_or_right_click_cancels_and_leaves_the_scene_as_it_was(key, monkeypatch):
    """The core is held at its start until the events are sent (so the run is still going whatever the
    machine's speed), then runs for real and stops at its first progress call; nothing is written."""
    obj = make_rig()
    before = scene_state(obj)
    go, work = threading.Event(), extract_action.PreparedExtraction.work
    monkeypatch.setattr(extract_action.PreparedExtraction, "work", lambda self, p=None: go.wait(60) and work(self, p))
    context = stand_in_context()
    op = Driven(bpy.types.MOCAP_OT_extract_keyframes, method="HYBRID", target="RATIO", ratio=10.0, replace=True)
    results = run_modal(op, context, [event("TIMER"), event("MOUSEMOVE"), event("A", "PRESS"), event(key, "PRESS")])
    go.set()
    assert results[1:] == [{"RUNNING_MODAL"}, {"PASS_THROUGH"}, {"RUNNING_MODAL"}, {"CANCELLED"}]
    assert op._job.wait(120) and op._job.cancelled
    with pytest.raises(jobs.Cancelled):
        op._job.result()
    assert same_state(scene_state(obj), before)  # Replace Keys was on: the keys are the same
    assert op.reports == [("WARNING", "Extracting keyframes cancelled: nothing changed")]
    wm = context.window_manager
    assert wm.timers == [] and wm.progress[-1] == ("end",) and context.workspace.texts[-1] is None


def test_a_failure_in_the_worker_is_reported_and_nothing_is_written(monkeypatch):
    obj = make_rig()
    before = scene_state(obj)

    def fail(self, progress=None):
        progress(0.3)
        raise ValueError("the core refused")

    monkeypatch.setattr(extract_action.PreparedExtraction, "work", fail)
    context = stand_in_context()
    op = Driven(bpy.types.MOCAP_OT_extract_keyframes, method="UNIFORM", target="COUNT", count=10)
    assert run_modal(op, context)[-1] == {"CANCELLED"}
    assert op.reports == [("ERROR", "the core refused")]
    assert same_state(scene_state(obj), before) and context.window_manager.timers == []


def test_a_failure_while_writing_puts_the_file_back(monkeypatch):
    obj = make_rig()
    before = scene_state(obj)
    write = extract_action.PreparedExtraction.write

    def fail_after_writing(self, result, progress=None):
        write(self, result, progress)  # the new action is made and assigned
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(extract_action.PreparedExtraction, "write", fail_after_writing)
    context = stand_in_context()
    op = Driven(bpy.types.MOCAP_OT_extract_keyframes, method="UNIFORM", target="COUNT", count=10)
    assert run_modal(op, context)[-1] == {"CANCELLED"}
    assert op.reports[0][0] == "ERROR" and "Internal error: RuntimeError: disk on fire" in op.reports[0][1]
    assert same_state(scene_state(obj), before)


def test_a_refused_setting_ends_before_any_job_starts():
    make_rig()
    context = stand_in_context()
    op = Driven(bpy.types.MOCAP_OT_extract_keyframes, method="HYBRID", target="THRESHOLD")
    assert op.start_job(context) == {"CANCELLED"}
    assert op.reports == [("ERROR", "A threshold target applies to the Threshold Rule method only")]
    assert context.window_manager.handlers == [] and context.window_manager.timers == []


def test_retarget_with_physics_runs_modal_and_cancels_cleanly():
    source, target = walk_pair()
    before = scene_state(source, target)
    physics = {
        "use_physics": True,
        "target_mass": 90.0,
        "target_height": 1.99,
        "source_mass": 60.0,
        "use_balance": False,
        "use_torque_limits": False,
        "plot_physics": False,
    }  # the filter only: quick
    context = stand_in_context()
    op = Driven(bpy.types.MOCAP_OT_retarget, **physics)
    results = run_modal(op, context, [event("ESC", "PRESS")])
    assert results[-1] == {"CANCELLED"} and op._job.wait(300)
    assert same_state(scene_state(source, target), before)
    assert context.area.texts[0].startswith("Retargeting with physics: 0%")
    context = stand_in_context()
    op = Driven(bpy.types.MOCAP_OT_retarget, **physics)
    assert run_modal(op, context)[-1] == {"FINISHED"}
    assert target.animation_data.action != before[2][1] and op.reports[-1][0] == "INFO"
    assert "physics" in bpy.context.scene.mocap_workbench.retarget.last_report


def test_invoke_without_a_window_runs_at_once():
    """Background Blender (and scripts): invoke runs the same steps in execute, no modal."""
    obj = make_rig()
    original = obj.animation_data.action
    assert bpy.app.background
    assert bpy.ops.mocap.extract_keyframes("INVOKE_DEFAULT", method="UNIFORM", target="COUNT", count=8) == {"FINISHED"}
    assert obj.animation_data.action != original


def test_retarget_chooses_its_keyframes_in_the_worker_too():
    """With Extract Keyframes on, the keys of the retargeted motion are chosen by the work (no Blender
    data), and writing puts exactly those keys on the new action."""
    source = walk_armature()
    target = walk_armature()
    select_pair(source, target)
    before = scene_state(source, target)
    extract = keyframe_operators.extraction_options(bpy.context.scene.mocap_workbench, target)
    prepared = retarget_action.prepare_retarget(source, target, extract=extract)
    job = jobs.Job(prepared.work).start()
    assert job.wait(300)
    done = job.result()
    assert done.keys is not None and done.keys.params["stored_keys"] > 0
    assert same_state(scene_state(source, target), before)  # chosen, not written
    report = prepared.write(done)
    assert report.extraction.params["stored_keys"] == done.keys.params["stored_keys"]
    curves = {(fc.data_path, fc.array_index): fc for fc in animdata.object_channels(target).fcurves}
    assert target.animation_data.action.name == report.result_action and len(done.keys.plan) > 10
    for (bone, prop, index), planned in done.keys.plan.items():
        fcurve = curves[(f'pose.bones["{bone}"].{prop}', index)]
        frames = np.array([k.co[0] for k in fcurve.keyframe_points])
        assert np.array_equal(frames, report.frames[planned.keys])


class Reading(jobs.JobOperator):
    """A job with main-thread reads (as a batch imports files): each read makes an action and removes it
    again, as an import read and removed does; the work sums what the reads gathered."""

    def __init__(self, n_reads, fail_at=None):
        self.reports, self.log, self.n_reads, self.fail_at = [], [], n_reads, fail_at

    def report(self, kind, text):
        self.reports.append((next(iter(kind)), text))

    def prepare(self, context):
        gathered = []

        def reads():
            try:
                for i in range(self.n_reads):
                    if i == self.fail_at:
                        raise ValueError(f"file {i} is not a motion")
                    action = bpy.data.actions.new(f"import {i}")
                    gathered.append(i)
                    bpy.data.actions.remove(action)
                    self.log.append(("read", i, threading.current_thread() is threading.main_thread()))
                    yield (i + 1) / self.n_reads
            finally:
                self.log.append(("closed",))

        def work(progress):
            progress(1.0)
            return sum(gathered)

        def finish(context, result):
            self.report({"INFO"}, f"sum {result}")
            return {"FINISHED"}

        return jobs.Task(work, finish, "Reading and working", reads=reads(), read_share=0.5)


def test_reads_run_on_the_main_thread_a_step_a_tick_with_progress_then_the_work():
    context, before = stand_in_context(), scene_state()
    op = Reading(4)
    results = run_modal(op, context)
    assert results[-1] == {"FINISHED"} and op.reports[-1] == ("INFO", "sum 6")
    reads = [e for e in op.log if e[0] == "read"]
    assert [e[1] for e in reads] == [0, 1, 2, 3] and all(e[2] for e in reads)
    assert len(results) >= 6  # start, four reads (one a tick), the end of the reads, the work
    updates = [u[1] for u in context.window_manager.progress if u[0] == "update"]
    assert updates[:4] == [12, 25, 37, 50] and updates == sorted(updates)  # the reads fill half the bar
    assert same_state(before, scene_state())


def test_esc_between_reads_stops_them_and_the_work_never_runs():
    context, before = stand_in_context(), scene_state()
    op = Reading(5)
    results = run_modal(op, context, [event("TIMER"), event("TIMER"), event("ESC", "PRESS")])
    assert results[-1] == {"CANCELLED"} and op.reports[-1][0] == "WARNING" and "cancelled" in op.reports[-1][1]
    assert [e[1] for e in op.log if e[0] == "read"] == [0, 1] and op.log[-1] == ("closed",)
    assert op._job.thread is None and context.window_manager.timers == []
    assert same_state(before, scene_state())


def test_a_failing_read_ends_the_job_with_its_error_and_nothing_written():
    context, before = stand_in_context(), scene_state()
    op = Reading(3, fail_at=1)
    results = run_modal(op, context)
    assert results[-1] == {"CANCELLED"} and op.reports[-1] == ("ERROR", "file 1 is not a motion")
    assert op._job.thread is None and context.window_manager.timers == []
    assert same_state(before, scene_state())


def test_reads_run_at_once_without_a_window():
    op = Reading(3)
    assert op.execute(bpy.context) == {"FINISHED"} and op.reports[-1] == ("INFO", "sum 3")


class Writing(jobs.JobOperator):
    """A job whose finish writes in steps (as a control rig's fit does, a pass a step): each step makes an
    action; ``fail_at`` makes that step raise."""

    def __init__(self, n_writes, fail_at=None):
        self.reports, self.log, self.n_writes, self.fail_at = [], [], n_writes, fail_at

    def report(self, kind, text):
        self.reports.append((next(iter(kind)), text))

    def prepare(self, context):
        def finish(context, result):
            try:
                for i in range(self.n_writes):
                    if i == self.fail_at:
                        raise ValueError(f"write {i} failed")
                    bpy.data.actions.new(f"written {i}").use_fake_user = True
                    self.log.append(("write", i, threading.current_thread() is threading.main_thread()))
                    yield (i + 1) / self.n_writes
            finally:
                self.log.append(("closed",))
            self.report({"INFO"}, f"wrote {self.n_writes} after {result}")
            return {"FINISHED"}

        return jobs.Task(lambda progress: 7, finish, "Working and writing", write_share=0.5)


def test_writes_run_a_step_a_tick_with_progress_and_are_kept():
    context = stand_in_context()
    op = Writing(4)
    names = {a.name for a in bpy.data.actions}
    results = run_modal(op, context)
    assert results[-1] == {"FINISHED"} and op.reports[-1] == ("INFO", "wrote 4 after 7")
    assert [e[1] for e in op.log if e[0] == "write"] == [0, 1, 2, 3] and all(e[2] for e in op.log if e[0] == "write")
    assert {a.name for a in bpy.data.actions} - names == {f"written {i}" for i in range(4)}
    updates = [u[1] for u in context.window_manager.progress if u[0] == "update"]
    assert updates[-4:] == [62, 75, 87, 100] and updates == sorted(updates)  # the writes fill the last half
    assert context.window_manager.timers == [] and context.window_manager.progress[-1] == ("end",)


@pytest.mark.parametrize("fail_at", [None, 2])
def test_esc_or_a_failure_between_writes_puts_the_file_back(fail_at):
    context, before = stand_in_context(), scene_state()
    op = Writing(5, fail_at)
    assert op.start_job(context) == {"RUNNING_MODAL"} and op._job.wait(10)  # the work is done: the writes next
    events = [event("TIMER")] * 6 if fail_at is not None else [event("TIMER")] * 3 + [event("ESC", "PRESS")]
    results = []
    for e in events:
        results.append(op.modal(context, e))
        if results[-1] != {"RUNNING_MODAL"}:
            break
    assert results[-1] == {"CANCELLED"} and op.log[-1] == ("closed",)
    assert len([e for e in op.log if e[0] == "write"]) == 2  # two actions made, then stopped
    assert op.reports[-1] == (("ERROR", "write 2 failed") if fail_at is not None else op.reports[-1])
    assert op.reports[-1][0] == "ERROR" or "cancelled" in op.reports[-1][1]
    assert same_state(before, scene_state()) and context.window_manager.timers == []


def test_writes_run_at_once_without_a_window():
    op = Writing(3)
    assert op.execute(bpy.context) == {"FINISHED"} and op.reports[-1] == ("INFO", "wrote 3 after 7")
    assert {f"written {i}" for i in range(3)} <= {a.name for a in bpy.data.actions}
