"""Edit motion files headless (MotionPro operations): BVH or ASF/AMC in, BVH or .amc (+ .asf) out.

    python scripts/edit.py cut clip.bvh rest.bvh --start 100 --stop 220 --clip removed.bvh
    python scripts/edit.py paste target.bvh clip.bvh out.bvh --at 150 [--start S --stop E]
    python scripts/edit.py reverse clip.bvh out.bvh
    python scripts/edit.py resample clip.bvh out.bvh (--fps 30 | --factor 2.0)
    python scripts/edit.py rotate clip.bvh out.bvh --degrees 90 [--pivot X Y Z]
    python scripts/edit.py transition walk.bvh dance.bvh out.bvh [--window 0.5] [--frame-a F --frame-b F]
    python scripts/edit.py blend walk.bvh wave.bvh out.bvh --joint Spine [--weight 1 --offset 0 --root-rotation]
    python scripts/edit.py interpolate walk.bvh run.bvh out.bvh --coefficient 0.5 [--speed 1.2 --loop-b 4]
    python scripts/edit.py pca walk1.bvh walk2.bvh -o new.bvh --value 120 [--params speed --loops 4]
    python scripts/edit.py key-edit clip.bvh out.bvh --frame 80 --rotate LeftArm 0 0 30 --width 12
    blender -b -P scripts/edit.py -- <command> <arguments>

Inputs: .bvh, or .amc with its .asf found next to it (``--asf`` to name it). Output: the
extension picks the format (.amc writes the .asf beside it). ``--report FILE`` writes a JSON
report (frames, fps and the operation's measures); a one-line summary is always printed.
Exit status: 0 done, 1 the operation or an input failed (message on stderr), 2 a bad argument:
a value that is not finite or out of range, a frame outside the loaded clip, an output that
would be too large, an output that is an input (``--force`` allows it), or an .asf beside an
.amc output that would replace a different existing one (``--force``). Outputs are written
atomically (a temporary file in the same folder, then moved into place).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from . import _arguments as A
from . import _files
from ._arguments import UsageError, script_args

UP_AXES = ["x", "y", "z", "+x", "+y", "+z", "-x", "-y", "-z"]


def _io(p: argparse.ArgumentParser, inputs: int = 1) -> None:
    names = ["input"] if inputs == 1 else ["a", "b"]
    for name in names:
        p.add_argument(name, type=Path, help="motion file (.bvh or .amc)")
    p.add_argument("output", type=Path, help="output file (.bvh or .amc)")


def _window(p: argparse.ArgumentParser) -> None:
    p.add_argument("--start", type=A.index, help="first frame (0-based)")
    p.add_argument("--stop", type=A.index, help="frame after the last one (exclusive)")


def _command(sub, name: str, **kwargs) -> argparse.ArgumentParser:
    """A sub-command that also takes --force after its name (the top level's value is kept otherwise)."""
    p = sub.add_parser(name, **kwargs)
    p.add_argument(
        "--force",
        action="store_true",
        default=argparse.SUPPRESS,
        help="allow replacing an input, or a different .asf beside an .amc output",
    )
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = A.Parser(prog="edit.py", description=__doc__.split("\n")[0])
    parser.add_argument("--asf", type=Path, help="skeleton for .amc inputs (default: found next to each .amc)")
    parser.add_argument("--up", type=str.lower, choices=UP_AXES, help="up axis (x, y, z, -y, ...; default: detected)")
    parser.add_argument("--report", type=Path, help="write a JSON report here")
    parser.add_argument(
        "--force", action="store_true", help="allow replacing an input, or a different .asf beside an .amc output"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = _command(sub, "cut", help="remove frames [start, stop); the rest joins with root continuity")
    _io(p)
    _window(p)
    p.add_argument("--clip", type=Path, help="also write the removed frames here")

    p = _command(sub, "paste", help="insert a clip before frame --at, continuing the root path")
    p.add_argument("input", type=Path, help="target motion")
    p.add_argument("clip", type=Path, help="motion to insert")
    p.add_argument("output", type=Path)
    p.add_argument("--at", type=A.index, required=True, help="frame of the target before which the clip goes")
    _window(p)

    p = _command(sub, "reverse", help="play backwards")
    _io(p)

    p = _command(sub, "resample", help="change the frame rate (same duration) or the duration (same rate)")
    _io(p)
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--fps", type=A.positive, help="new frame rate, same duration")
    group.add_argument("--factor", type=A.positive, help="duration factor at the same rate (2 = half speed)")

    p = _command(sub, "rotate", help="turn the whole motion about the vertical axis")
    _io(p)
    p.add_argument("--degrees", type=A.finite, required=True, help="counter-clockwise seen from above")
    p.add_argument("--pivot", type=A.finite, nargs=3, help="pivot point (default: the pelvis at frame 0)")

    p = _command(sub, "transition", help="blend from A into B with root alignment and foot clean-up")
    _io(p, 2)
    p.add_argument("--window", type=A.positive, default=0.5, help="blend length in seconds (default 0.5)")
    p.add_argument("--frame-a", type=A.index, help="blend start in A (default: searched)")
    p.add_argument("--frame-b", type=A.index, help="blend start in B (default: searched)")
    p.add_argument("--search-a", type=A.index, nargs=2, metavar=("LO", "HI"), help="start frames of A to search")
    p.add_argument("--search-b", type=A.index, nargs=2, metavar=("LO", "HI"), help="start frames of B to search")
    p.add_argument("--margin", type=A.non_negative, default=0.5, help="seconds around the window for foot clean-up")
    p.add_argument("--no-cleanup", action="store_true", help="skip the foot-sliding clean-up")

    p = _command(sub, "blend", help="take a joint and its subtree from B, the rest from A")
    _io(p, 2)
    p.add_argument("--joint", required=True, help="joint whose subtree comes from B")
    p.add_argument("--weight", type=A.between(0, 1), default=1.0, help="how much of B, 0..1")
    p.add_argument("--offset", type=A.index, default=0, help="first frame of B to use")
    p.add_argument("--length", type=A.count, help="frames of B to use (default: the rest of B)")
    p.add_argument("--no-stretch", action="store_true", help="use B frame by frame instead of stretching it onto A")
    p.add_argument("--soft-edge", type=A.between(0, 1), default=0.5, help="share of the weight for the joint's parent")
    p.add_argument("--root-rotation", action="store_true", help="take B's pelvis orientation (in A's heading)")

    p = _command(sub, "interpolate", help="interpolate two time-aligned motions (walk + run = jog)")
    _io(p, 2)
    p.add_argument("--coefficient", type=A.between(-0.5, 1.5), required=True, help="0 = A, 1 = B; -0.5..1.5 allowed")
    p.add_argument("--speed", type=A.positive, default=1.0, help="time-scale factor (2 = twice as fast), up to 10")
    p.add_argument("--events-a", type=A.non_negative, nargs="+", help="key event frames in A (default: foot strikes)")
    p.add_argument("--events-b", type=A.non_negative, nargs="+", help="matching key event frames in B")
    p.add_argument("--loop-a", type=A.count, default=1, help="repeat A, a closed loop, this many times first")
    p.add_argument("--loop-b", type=A.count, default=1, help="repeat B, a closed loop, this many times first")

    p = _command(sub, "pca", help="fit PCA to gait cycles of similar motions and synthesise a new one")
    p.add_argument("inputs", type=Path, nargs="+", help="similar cyclic motions (same joint names)")
    p.add_argument("-o", "--output", type=Path, required=True)
    p.add_argument("--params", nargs="+", default=["speed"], help="'speed' or one value per input")
    p.add_argument("--value", type=A.finite, required=True, help="parameter value of the new motion")
    p.add_argument("--loops", type=A.count, default=4, help="cycles in the output")
    p.add_argument("--components", type=A.count, help="PCA components to use (default: all)")
    p.add_argument("--frames", type=A.count, default=32, help="frames per normalised cycle")
    p.add_argument("--side", help="foot whose strikes cut the cycles (default L)")

    p = _command(sub, "key-edit", help="change one frame's pose and fade the change into its neighbours")
    _io(p)
    p.add_argument("--frame", type=A.index, required=True, help="the frame to change (0-based)")
    p.add_argument("--width", type=A.non_negative, default=10.0, help="frames on each side over which the change fades")
    p.add_argument("--shape", default="smootherstep", choices=["smootherstep", "smoothstep", "linear"])
    p.add_argument("--rotate", nargs=4, action="append", default=[], metavar=("JOINT", "X", "Y", "Z"),
                   help="turn JOINT further by Euler angles in degrees (Blender XYZ order); repeatable")  # fmt: skip
    p.add_argument("--set-rotation", nargs=5, action="append", default=[], metavar=("JOINT", "W", "X", "Y", "Z"),
                   help="set JOINT's local rotation quaternion; repeatable")  # fmt: skip
    p.add_argument("--translate", nargs=4, action="append", default=[], metavar=("JOINT", "DX", "DY", "DZ"),
                   help="move JOINT's local translation by this much (scene units); repeatable")  # fmt: skip
    return parser.parse_args(argv)


class Editor:
    """Runs one command with the package's core; returns (output motion, report dict)."""

    def __init__(self, args: argparse.Namespace) -> None:
        from ..core import editing
        from ..core import quaternion as quat
        from ..core.io.convert import load_motion

        self.args, self.ed, self.quat, self._load = args, editing, quat, load_motion

    def load(self, path: Path):
        return self._load(path, asf=self.args.asf if path.suffix.lower() == ".amc" else None)

    def run(self):
        return getattr(self, "cmd_" + self.args.command.replace("-", "_"))()

    def cmd_cut(self):
        motion = self.load(self.args.input)
        start, stop = _window_of(self.args, motion.n_frames)
        if stop - start == motion.n_frames:
            raise UsageError(f"--start {start} --stop {stop} would cut every frame of the clip")
        rest, clip = self.ed.cut(motion, start, stop, self.args.up)
        if self.args.clip:
            _save(clip.motion, self.args.clip, self.args.force)
        return rest, {"removed": [start, stop], "clip": str(self.args.clip or "")}

    def cmd_paste(self):
        target, source = self.load(self.args.input), self.load(self.args.clip)
        A.frame_in(self.args.at, target.n_frames, "--at", stop=True)
        start, stop = _window_of(self.args, source.n_frames)
        A.output_size(target.n_frames + stop - start, target.skeleton.n_joints, "paste")
        clip = self.ed.copy(source, start, stop, self.args.up) if (start, stop) != (0, source.n_frames) else source
        out = self.ed.paste(target, clip, self.args.at, self.args.up)
        return out, {"at": self.args.at, "clip_frames": stop - start}

    def cmd_reverse(self):
        return self.ed.reverse(self.load(self.args.input)), {}

    def cmd_resample(self):
        motion = self.load(self.args.input)
        joints, span = motion.skeleton.n_joints, max(motion.n_frames - 1, 0)
        if self.args.fps is not None:
            A.output_size(span * self.args.fps / motion.fps + 1, joints, f"--fps {self.args.fps:g}")
            return self.ed.resample(motion, self.args.fps), {"fps": self.args.fps}
        A.output_size(span * self.args.factor + 1, joints, f"--factor {self.args.factor:g}")
        out = self.ed.time_scale(motion, self.args.factor)
        return out, {"factor": self.args.factor, "exact_factor": (out.n_frames - 1) / max(motion.n_frames - 1, 1)}

    def cmd_rotate(self):
        pivot = None if self.args.pivot is None else np.array(self.args.pivot)
        return self.ed.rotate(self.load(self.args.input), self.args.degrees, pivot, self.args.up), {}

    def cmd_transition(self):
        a, b = self.load(self.args.a), self.load(self.args.b)
        A.frame_in(self.args.frame_a, a.n_frames, "--frame-a")
        A.frame_in(self.args.frame_b, b.n_frames, "--frame-b")
        for option, search, n in (
            ("--search-a", self.args.search_a, a.n_frames),
            ("--search-b", self.args.search_b, b.n_frames),
        ):
            if search is not None:
                A.frame_in(search[0], n, option)
                A.frame_in(search[1], n, option, stop=True)
                if search[1] <= search[0]:
                    raise UsageError(f"argument {option}: HI must be greater than LO, got {search[0]} {search[1]}")
        window = self.args.window * a.fps
        if window >= a.n_frames + b.n_frames:
            raise UsageError(
                f"argument --window: {self.args.window:g} s ({window:.0f} frames) is longer than both clips"
            )
        tr = self.ed.transition(
            a,
            b,
            self.args.window,
            self.args.frame_a,
            self.args.frame_b,
            self.args.search_a,
            self.args.search_b,
            cleanup=not self.args.no_cleanup,
            margin=self.args.margin,
            up=self.args.up,
        )
        report = {
            "frame_a": tr.frame_a,
            "frame_b": tr.frame_b,
            "window": tr.window,
            "blend": list(tr.blend),
            "join_cost": tr.cost,
            "region": list(tr.region),
            "skating_before": tr.skating_before.total_distance,
            "skating_after": None if tr.skating_after is None else tr.skating_after.total_distance,
            "continuity": tr.continuity.as_dict(),
        }
        return tr.motion, report

    def cmd_blend(self):
        a, b = self.load(self.args.a), self.load(self.args.b)
        A.frame_in(self.args.offset, b.n_frames, "--offset")
        if self.args.length is not None and self.args.offset + self.args.length > b.n_frames:
            raise UsageError(
                f"argument --length: {self.args.offset} + {self.args.length} frames run past B's {b.n_frames} frames"
            )
        out = self.ed.blend_parts(
            a,
            b,
            self.args.joint,
            self.args.weight,
            self.args.offset,
            self.args.length,
            not self.args.no_stretch,
            self.args.soft_edge,
            self.args.root_rotation,
            self.args.up,
        )
        return out, {"joint": self.args.joint, "weight": self.args.weight}

    def cmd_interpolate(self):
        a, b = self.load(self.args.a), self.load(self.args.b)
        if self.args.speed > 10:
            raise UsageError(f"argument --speed: must be at most 10, got {self.args.speed:g}")
        joints = a.skeleton.n_joints
        A.output_size(a.n_frames * self.args.loop_a, joints, f"--loop-a {self.args.loop_a}")
        A.output_size(b.n_frames * self.args.loop_b, joints, f"--loop-b {self.args.loop_b}")
        longest = max(a.n_frames * self.args.loop_a, b.n_frames * self.args.loop_b * a.fps / b.fps)
        A.output_size(longest / self.args.speed, joints, f"--speed {self.args.speed:g}")
        for option, events in (("--events-a", self.args.events_a), ("--events-b", self.args.events_b)):
            n = (a.n_frames * self.args.loop_a) if option == "--events-a" else (b.n_frames * self.args.loop_b)
            if events is not None and max(events) > n - 1:
                raise UsageError(f"argument {option}: frame {max(events):g} is outside the clip (0 to {n - 1})")
        if self.args.loop_a > 1:
            a = self.ed.repeat(a, self.args.loop_a, closed=True, up=self.args.up)
        if self.args.loop_b > 1:
            b = self.ed.repeat(b, self.args.loop_b, closed=True, up=self.args.up)
        res = self.ed.interpolate(
            a, b, self.args.coefficient, self.args.events_a, self.args.events_b, self.args.speed, self.args.up
        )
        report = {
            "coefficient": self.args.coefficient,
            "speed": self.args.speed,
            "events_a": res.events_a.tolist(),
            "events_b": res.events_b.tolist(),
            "events": res.events.tolist(),
        }
        return res.motion, report

    def cmd_pca(self):
        motions = [self.load(p) for p in self.args.inputs]
        A.output_size(
            self.args.loops * self.args.frames + 1,
            motions[0].skeleton.n_joints,
            f"--loops {self.args.loops} of --frames {self.args.frames}",
        )
        if self.args.frames < 2:
            raise UsageError(f"argument --frames: must be at least 2, got {self.args.frames}")
        params = "speed" if self.args.params == ["speed"] else [_number(v, "--params") for v in self.args.params]
        if params != "speed" and len(params) != len(motions):
            raise ValueError(f"--params needs one value per input ({len(motions)}), got {len(params)}")
        model = self.ed.fit_cycle_pca(motions, params, self.args.frames, self.args.side, self.args.up)
        out = model.generate(self.args.value, self.args.loops, self.args.components)
        ratio = model.explained_variance_ratio
        report = {
            "cycles": len(model.cycles),
            "cycle_sources": [str(self.args.inputs[c.source]) for c in model.cycles],
            "parameters": model.parameters.tolist(),
            "explained_variance_ratio": ratio.tolist(),
            "components_for_90_percent": model.n_components_for(0.9),
            "parameter_r2": model.parameter_r2,
            "value": self.args.value,
        }
        return out, report

    def cmd_key_edit(self):
        motion = self.load(self.args.input)
        frame, quat = self.args.frame, self.quat
        A.frame_in(frame, motion.n_frames, "--frame")
        rotations, translations = {}, {}
        for joint, *xyz in self.args.rotate:
            turn = quat.from_euler(np.radians([_number(v, "--rotate") for v in xyz]), "XYZ")
            current = rotations.get(joint, motion.rotations[frame, motion.skeleton.index(joint)])
            rotations[joint] = quat.multiply(current, turn)
        for joint, *wxyz in self.args.set_rotation:
            q = np.array([_number(v, "--set-rotation") for v in wxyz])
            if not np.linalg.norm(q) > 1e-12:
                raise UsageError("argument --set-rotation: the quaternion must not be zero")
            rotations[joint] = q / np.linalg.norm(q)
        for joint, *delta in self.args.translate:
            current = translations.get(joint, motion.translations[frame, motion.skeleton.index(joint)])
            translations[joint] = current + np.array([_number(v, "--translate") for v in delta])
        if not rotations and not translations:
            raise ValueError("nothing to edit: give --rotate, --set-rotation or --translate")
        out = self.ed.key_edit(motion, frame, rotations, translations, self.args.width, self.args.shape)
        return out, {"frame": frame, "joints": sorted(set(rotations) | set(translations)), "width": self.args.width}


def _number(text: str, option: str) -> float:
    """A finite number from a free-form argument (a joint's angles, a parameter), else UsageError."""
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"argument {option}: expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise UsageError(f"argument {option}: expected a finite number, got {text!r}")
    return value


def _window_of(args: argparse.Namespace, n_frames: int) -> tuple[int, int]:
    """--start/--stop checked against a clip of ``n_frames`` (defaults: the whole clip)."""
    start = 0 if args.start is None else args.start
    stop = n_frames if args.stop is None else args.stop
    A.frame_in(start, n_frames, "--start")
    A.frame_in(stop, n_frames, "--stop", stop=True)
    if stop <= start:
        raise UsageError(f"argument --stop: must be greater than --start ({start}), got {stop}")
    return start, stop


def _save(motion, path: Path, force: bool = False) -> list[str]:
    return [str(p) for p in _files.save_motion(motion, path, force=force)]


def _inputs_and_outputs(args: argparse.Namespace) -> tuple[list, list]:
    """The files the command reads (with the .asf of each .amc) and the files it writes."""
    from ..core.io.convert import find_asf

    reads = [getattr(args, name, None) for name in ("input", "a", "b")]
    reads += list(getattr(args, "inputs", None) or [])
    if args.command == "paste":
        reads.append(args.clip)
    reads = [Path(p) for p in reads if p is not None]
    for path in list(reads):
        if path.suffix.lower() == ".amc":
            try:
                reads.append(args.asf or find_asf(path))
            except OSError:
                pass  # reported when the file is read
    writes = [args.output, args.report, args.clip if args.command == "cut" else None]
    writes += [Path(p).with_suffix(".asf") for p in writes if p is not None and Path(p).suffix.lower() == ".amc"]
    return reads, writes


def main(argv: list[str] | None = None) -> int:
    args = parse_args(script_args(argv))
    prog = f"edit.py {args.command}"
    start = time.perf_counter()
    try:
        reads, writes = _inputs_and_outputs(args)
        _files.check_outputs(writes, reads, args.force)
        motion, report = Editor(args).run()
        written = _save(motion, args.output, args.force)
    except UsageError as exc:
        return A.fail(prog, exc, 2)
    except KeyError as exc:
        return A.fail(prog, f"unknown joint {exc}", 1)
    except (ValueError, OSError) as exc:
        return A.fail(prog, exc, 1)
    except Exception as exc:  # no traceback for a user's run; the type says what went wrong
        return A.fail(prog, f"{type(exc).__name__}: {exc}", 1)
    report = {
        "command": args.command,
        "output": written,
        "frames": motion.n_frames,
        "fps": motion.fps,
        "seconds": time.perf_counter() - start,
        **report,
    }
    if args.report:
        try:
            _files.write_json(args.report, report)
        except OSError as exc:
            return A.fail(prog, f"cannot write the report: {exc}", 1)
    print(f"{args.command}: wrote {', '.join(written)} ({motion.n_frames} frames, {motion.fps:g} fps)")
    return 0
