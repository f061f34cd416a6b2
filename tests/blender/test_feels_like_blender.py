"""The extension follows Blender's conventions (issue #11 item 5, "Feels like Blender"): UPPER_CASE
enum identifiers that still open old files, tooltips in Blender's voice, units, the Dope Sheet header
button, a compact sidebar, add-on preferences, operator presets, poll messages, a lean zip."""

from importlib import import_module

import bpy
import pytest

from tests.blender.conftest import PACKAGE

armature = import_module(PACKAGE + ".addon.common.armature")
synthetic = import_module(PACKAGE + ".core.synthetic")

# Extract Keyframes' methods in the order of the identifiers files saved before they became UPPER_CASE
# ('hybrid', 'optimal', …): a .blend stores an enum as its item's index, so this order must not change.
OLD_METHODS = ("hybrid", "optimal", "activity", "simplify", "threshold", "uniform")
OLD_SHAPES = ("smootherstep", "smoothstep", "linear")


def make_rig(motion=None):
    motion = motion or synthetic.demo_clip()
    obj = armature.create_animated_armature(motion, "Mocap", bpy.context.scene.collection)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


BASES = (bpy.types.Operator, bpy.types.Panel, bpy.types.Menu, bpy.types.UIList, bpy.types.AddonPreferences,
         bpy.types.PropertyGroup, bpy.types.FileHandler)  # fmt: skip


def extension_classes() -> list[type]:
    """Every class the extension registered (operators, panels, menus, lists, property groups…)."""
    found, stack = [], list(BASES)
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith(PACKAGE) and getattr(sub, "is_registered", False):
                found.append(sub)
    return sorted(set(found), key=lambda c: c.__name__)


def operator_rna(cls):
    """An operator's RNA type as ``bpy.ops`` gives it: its description and its own properties."""
    module, name = cls.bl_idname.split(".")
    return getattr(getattr(bpy.ops, module), name).get_rna_type()


def own_properties(cls) -> list:
    """The properties the extension defined on a class (not Blender's own ``bl_*`` of its base type)."""
    if issubclass(cls, bpy.types.Operator):
        return [p for p in operator_rna(cls).properties if p.identifier != "rna_type"]
    inherited = set(next(b for b in BASES if issubclass(cls, b)).bl_rna.properties.keys())
    return [p for p in cls.bl_rna.properties if p.identifier not in inherited]


def stored_settings(scene):
    """The raw ID properties behind ``scene.mocap_workbench`` (5.0 keeps bpy.props apart from custom ones)."""
    holder = scene.bl_system_properties_get() if hasattr(scene, "bl_system_properties_get") else scene
    return holder["mocap_workbench"]


# --- 1. enum identifiers -----------------------------------------------------------------------


def test_every_enum_identifier_is_upper_case():
    enums = [(cls.__name__, p) for cls in extension_classes() for p in own_properties(cls) if p.type == "ENUM"]
    assert len(enums) >= 15
    for owner, prop in enums:
        for item in prop.enum_items:
            assert item.identifier == item.identifier.upper(), (owner, prop.identifier, item.identifier)


def test_items_keep_the_order_old_files_stored():
    settings = bpy.context.scene.mocap_workbench
    methods = settings.bl_rna.properties["method"].enum_items
    assert [i.identifier for i in methods] == [m.upper() for m in OLD_METHODS]
    shapes = settings.editing.bl_rna.properties["falloff_shape"].enum_items
    assert [i.identifier for i in shapes] == [s.upper() for s in OLD_SHAPES]


def test_a_file_saved_with_the_old_identifiers_opens_with_its_settings(tmp_path):
    """Scene settings (a PointerProperty's PropertyGroup) keep an enum as its item's index: a file saved
    when the 4th method was 'simplify' (index 3) opens with 'SIMPLIFY'."""
    scene = bpy.context.scene
    scene.mocap_workbench.method = "SIMPLIFY"
    scene.mocap_workbench.editing.falloff_shape = "LINEAR"
    raw = stored_settings(scene)
    assert raw["method"] == OLD_METHODS.index("simplify") and isinstance(raw["method"], int)
    raw["method"] = OLD_METHODS.index("threshold")  # what a file of the lowercase days holds for 'threshold'
    path = str(tmp_path / "old.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.context.scene.mocap_workbench.method != "THRESHOLD"
    bpy.ops.wm.open_mainfile(filepath=path)
    settings = bpy.context.scene.mocap_workbench
    assert settings.method == "THRESHOLD" and settings.editing.falloff_shape == "LINEAR"


def test_python_callers_pass_upper_case_identifiers():
    """Decision: Python callers and presets use the new identifiers; the old lowercase ones are refused
    with Blender's own error naming the valid ones (there were no operator presets before this version)."""
    make_rig()
    assert bpy.ops.mocap.extract_keyframes(method="HYBRID", target="COUNT", count=12) == {"FINISHED"}
    with pytest.raises(TypeError, match="HYBRID"):
        bpy.ops.mocap.extract_keyframes(method="hybrid", target="COUNT", count=12)


# --- 2. tooltips -------------------------------------------------------------------------------

JARGON = ("δ", "slerp", "process noise", "UKF", "ZMP", "Kalman")


def tooltips() -> list[tuple[str, str]]:
    """(where, text) of every tooltip the extension shows: class descriptions (from docstrings),
    property descriptions and enum item descriptions."""
    found = []
    for cls in extension_classes():
        if not issubclass(cls, bpy.types.UIList):
            rna = operator_rna(cls) if issubclass(cls, bpy.types.Operator) else cls.bl_rna
            found.append((cls.__name__, rna.description))
        for prop in own_properties(cls):
            found.append((f"{cls.__name__}.{prop.identifier}", prop.description))
            if prop.type == "ENUM":
                for item in prop.enum_items:
                    found.append((f"{cls.__name__}.{prop.identifier}.{item.identifier}", item.description))
    return found


def test_tooltips_are_one_short_sentence_in_blenders_voice():
    texts = tooltips()
    assert len(texts) > 150
    bad = []
    for where, text in texts:
        if len(text) > 120 or "\n" in text or text.rstrip().endswith(".") or text != text.strip():
            bad.append((where, text))
        elif any(word.lower() in text.lower() for word in JARGON):
            bad.append((where, text))
    assert not bad, "\n".join(f"{w}: {t!r}" for w, t in bad)


# --- 3. units ----------------------------------------------------------------------------------

# Float options that are not a quantity with a unit (ratios, factors, counts per key, frame rates).
UNITLESS = {"global_scale", "fps", "weight", "soft_edge", "ratio", "threshold", "grid", "coefficient", "speed",
            "position", "value", "scale_ratio", "stiffness", "factor"}  # fmt: skip
UNITS = {"max_error": "LENGTH", "max_angle": "ROTATION", "target_height": "LENGTH", "target_mass": "MASS", "source_mass": "MASS",
         "angle": "ROTATION", "window": "TIME_ABSOLUTE"}  # fmt: skip


def test_every_quantity_option_carries_its_unit():
    floats = {p.identifier: p for cls in extension_classes() for p in own_properties(cls) if p.type == "FLOAT"}
    assert set(floats) == UNITLESS | set(UNITS), "a new float option: give it a unit or list it as unitless"
    for name, unit in UNITS.items():
        assert floats[name].unit == unit, name
    for name in UNITLESS:
        assert floats[name].unit == "NONE", name
    for name in ("max_error", "target_height"):
        assert floats[name].subtype == "DISTANCE"
    assert floats["angle"].subtype == "ANGLE"


def test_frame_options_are_whole_frames():
    props = {p.identifier: p for cls in extension_classes() for p in own_properties(cls)}
    for name, prop in props.items():
        if "frame" in prop.name.lower() and "rate" not in prop.name.lower() and prop.type in {"FLOAT", "INT"}:
            assert prop.type == "INT", name
    assert props["falloff"].type == "INT" and "Frames" in props["falloff"].name


def test_physics_masses_and_height_follow_the_scene_units():
    """Shown like Blender's own mass and length fields (times Unit Scale, a mass times its cube), handed
    to the core in kilograms and metres."""
    operators = import_module(PACKAGE + ".addon.retarget.operators")
    scene = bpy.context.scene
    settings = scene.mocap_workbench.retarget
    settings.use_physics = True
    settings.target_mass, settings.source_mass, settings.target_height = 90.0, 60.0, 1.99
    physics = operators.physics_settings_of(settings, scene)
    assert physics.target_mass == pytest.approx(90.0) and physics.target_height == pytest.approx(1.99)
    scene.unit_settings.scale_length = 0.5
    physics = operators.physics_settings_of(settings, scene)
    assert physics.target_mass == pytest.approx(90.0 / 8) and physics.source_mass == pytest.approx(60.0 / 8)
    assert physics.target_height == pytest.approx(1.99 / 2)
    settings.target_height = 0.0
    assert operators.physics_settings_of(settings, scene).target_height is None


def test_max_error_is_a_distance_in_the_scene():
    """The core measures in armature units: an armature scaled 0.01 (an FBX in centimetres) gets 100×."""
    operators = import_module(PACKAGE + ".addon.keyframes.operators")
    obj = make_rig()
    settings = bpy.context.scene.mocap_workbench
    settings.target, settings.max_error = "MAX_ERROR", 0.02
    assert operators.target_of(settings, obj)["max_error"] == pytest.approx(0.02)
    obj.scale = (0.01, 0.01, 0.01)
    bpy.context.view_layer.update()
    assert operators.target_of(settings, obj)["max_error"] == pytest.approx(2.0)


def test_report_figures_carry_the_scene_unit():
    units = import_module(PACKAGE + ".addon.common.units")
    scene = bpy.context.scene
    assert units.length(scene, 0.021) == "2.1 cm" and units.speed(scene, 1.25) == "1.25 m/s"
    scene.unit_settings.system = "IMPERIAL"
    assert units.length(scene, 1.0).endswith("'") and units.speed(scene, 1.0).endswith("ft/s")
    assert units.kilograms(scene, 90.0) == "1.98 cwt"  # Blender picks hundredweight here
    scene.unit_settings.system = "METRIC"
    assert units.kilograms(scene, 90.0) == "90 kg" and units.metres(scene, 1.99) == "1.99 m"
    scene.unit_settings.scale_length = 0.01  # a scene in centimetres: the same body, other numbers stored
    assert units.kilograms(scene, 90.0) == "90 kg" and units.metres(scene, 1.99) == "1.99 m"
    assert units.length(scene, 199.0) == "1.99 m"
    scene.unit_settings.scale_length = 1.0
    obj = make_rig()
    scene.cursor.location = (1.0, 2.0, 0.0)
    assert bpy.ops.mocap.rotate_motion(angle=0.5, pivot="CURSOR") == {"FINISHED"}
    report = scene.mocap_workbench.editing.last_report
    assert "through (1 m, 2 m)" in report, report
    obj.scale = (2.0, 2.0, 2.0)
    bpy.context.view_layer.update()
    assert units.armature_length(obj, 0.5) == "1 m"


def test_in_place_means_one_thing():
    """Retarget's In Place removes the root's travel; Smoothed Pose Edit's option rewrites keys: its label says so."""
    labels = {}
    for cls in extension_classes():  # the Acclaim importer's options mirror the BVH importer's wording
        for prop in own_properties(cls) if cls.__name__.startswith("MOCAP_") else ():
            if prop.type == "BOOLEAN":
                labels.setdefault(prop.name, set()).add(prop.description)
    assert all(len(descriptions) == 1 for descriptions in labels.values()), {
        k: v for k, v in labels.items() if len(v) > 1
    }
    retarget = bpy.context.scene.mocap_workbench.retarget.bl_rna.properties["in_place"]
    editing = bpy.context.scene.mocap_workbench.editing.bl_rna.properties["in_place"]
    assert retarget.name == "In Place" and editing.name == "Replace Keys"


# --- 4. Dope Sheet header button, compact sidebar ----------------------------------------------


class _Recorder:
    """Stands in for a header's ``self``: its layout notes the operators drawn."""

    def __init__(self):
        self.operators = []
        self.layout = self

    def operator(self, idname, **_kw):
        self.operators.append(idname)


@pytest.mark.parametrize(
    ("ui_type", "mode", "shown"),
    [("DOPESHEET", "DOPESHEET", True), ("DOPESHEET", "ACTION", True), ("DOPESHEET", "SHAPEKEY", False),
     ("DOPESHEET", "MASK", False), ("TIMELINE", None, False)],
)  # fmt: skip
def test_header_button_only_in_the_dope_sheet(ui_type, mode, shown):
    panels = import_module(PACKAGE + ".addon.keyframes.panels")
    window = bpy.context.window_manager.windows[0]
    area = window.screen.areas[0]
    area.ui_type = ui_type
    if mode is not None:
        area.spaces.active.mode = mode
    else:
        assert area.spaces.active.mode == "TIMELINE"
    recorder = _Recorder()
    with bpy.context.temp_override(window=window, area=area):
        panels.draw_dopesheet_header(recorder, bpy.context)
    assert recorder.operators == (["mocap.extract_keyframes"] if shown else [])
    assert panels.draw_dopesheet_header in bpy.types.DOPESHEET_HT_header.draw._draw_funcs


def test_the_mocap_tab_opens_compact():
    """In the 3D Viewport only Retarget and Edit open; every sub-panel and Keyframe Extraction start closed."""
    panels = [p for p in extension_classes() if issubclass(p, bpy.types.Panel) and p.bl_space_type == "VIEW_3D"]
    open_panels = {p.bl_label for p in panels if "DEFAULT_CLOSED" not in getattr(p, "bl_options", set())}
    assert open_panels == {"Retarget", "Edit"}
    assert all("DEFAULT_CLOSED" in p.bl_options for p in panels if getattr(p, "bl_parent_id", ""))
    assert len([p for p in panels if getattr(p, "bl_parent_id", "")]) >= 9


# --- 5. add-on preferences, operator presets ---------------------------------------------------


@pytest.fixture
def prefs():
    """The add-on's preferences, put back to their defaults afterwards."""
    prefs = bpy.context.preferences.addons[PACKAGE].preferences
    yield prefs
    for name in ("method", "target", "ratio", "count", "interpolation"):
        prefs.property_unset(name)


def test_preferences_belong_to_the_extension(prefs):
    preferences = import_module(PACKAGE + ".addon.common.preferences")
    assert preferences.PACKAGE == PACKAGE and type(prefs).bl_idname == PACKAGE
    assert preferences.package_name("bl_ext.user_default.mocap_workbench.addon.common") == (
        "bl_ext.user_default.mocap_workbench"
    )
    assert {"method", "target", "ratio", "count", "interpolation"} <= set(type(prefs).__annotations__)
    assert prefs.method == "HYBRID" and prefs.target == "RATIO"


def test_new_files_start_from_the_preferences(prefs, tmp_path):
    prefs.method, prefs.target, prefs.ratio, prefs.count, prefs.interpolation = "OPTIMAL", "COUNT", 7.5, 33, "LINEAR"
    bpy.ops.wm.read_homefile(use_empty=True)  # a new file: the scene takes the preferences
    settings = bpy.context.scene.mocap_workbench
    assert (settings.method, settings.target, settings.count, settings.interpolation) == (
        "OPTIMAL",
        "COUNT",
        33,
        "LINEAR",
    )
    assert settings.ratio == pytest.approx(7.5)
    settings.method, settings.count = "UNIFORM", 12  # the scene's own choice is kept in its file
    path = str(tmp_path / "own.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    prefs.method, prefs.count = "SIMPLIFY", 99
    bpy.ops.wm.open_mainfile(filepath=path)
    settings = bpy.context.scene.mocap_workbench
    assert settings.method == "UNIFORM" and settings.count == 12


def test_a_scene_made_in_the_session_takes_the_preferences_when_extracting(prefs):
    """Invoking (the sidebar button, a menu) seeds the scene first. Headless, bpy.ops runs execute even
    for INVOKE_DEFAULT (no window event), so the operator's invoke is called on a stand-in."""
    from types import SimpleNamespace

    prefs.method, prefs.target, prefs.count = "UNIFORM", "COUNT", 9
    scene = bpy.data.scenes.new("Second")
    bpy.context.window.scene = scene
    assert not scene.mocap_workbench.is_property_set("method")
    ran = SimpleNamespace(execute=lambda context: {"FINISHED"})
    ran.properties = SimpleNamespace(is_property_set=lambda name: False)  # the caller passed nothing
    assert bpy.types.MOCAP_OT_extract_keyframes.invoke(ran, bpy.context, None) == {"FINISHED"}
    assert scene.mocap_workbench.method == "UNIFORM" and scene.mocap_workbench.count == 9
    assert (ran.method, ran.target, ran.count) == ("UNIFORM", "COUNT", 9)


@pytest.mark.parametrize("operator", ["extract_keyframes", "retarget"])
def test_operator_presets(operator):
    op = getattr(bpy.ops.mocap, operator)
    assert "PRESET" in op.bl_options
    assert "PRESET" in getattr(bpy.types, f"MOCAP_OT_{operator}").bl_options
    assert op.get_rna_type().properties.keys()


def test_retarget_presets_name_no_armature():
    assert "SKIP_PRESET" in bpy.types.MOCAP_OT_retarget.__annotations__["source"].keywords["options"]


# --- 6. poll messages, NLA tweak mode ----------------------------------------------------------


def extension_operators() -> list[str]:
    return sorted(c.bl_idname for c in extension_classes() if issubclass(c, bpy.types.Operator))


@pytest.mark.parametrize("idname", extension_operators())
def test_a_grey_button_says_why(idname):
    """In an empty file every operator that cannot run says why (its tooltip shows the poll message)."""
    module, name = idname.split(".")
    op = getattr(getattr(bpy.ops, module), name)
    if op.poll():
        assert idname == "import_anim.acclaim"  # importing needs nothing
        return
    with pytest.raises(RuntimeError) as failure:
        op()
    assert "context is incorrect" not in str(failure.value), str(failure.value)


def test_every_operator_is_checked():
    assert len(extension_operators()) >= 20


def tweaked_rig():
    """An armature whose action is on an NLA strip being tweaked (its AnimData.action is read-only)."""
    obj = make_rig()
    anim = obj.animation_data
    action = anim.action
    track = anim.nla_tracks.new()
    track.strips.new(action.name, 1, action)
    anim.action = None
    track.select = True
    track.strips[0].select = True
    anim.use_tweak_mode = True
    assert anim.use_tweak_mode and anim.action == action and anim.is_property_readonly("action")
    return obj


def test_extract_keyframes_in_nla_tweak_mode_asks_to_leave_it():
    obj = tweaked_rig()
    assert not bpy.ops.mocap.extract_keyframes.poll()
    with pytest.raises(RuntimeError, match="Leave NLA tweak mode first"):
        bpy.ops.mocap.extract_keyframes(target="COUNT", count=10)
    obj.animation_data.use_tweak_mode = False
    obj.animation_data.action = obj.animation_data.nla_tracks[0].strips[0].action
    assert bpy.ops.mocap.extract_keyframes(target="COUNT", count=10) == {"FINISHED"}


def test_retarget_onto_an_armature_in_nla_tweak_mode_asks_to_leave_it():
    target = tweaked_rig()
    source = make_rig()
    source.select_set(True)
    target.select_set(True)
    bpy.context.view_layer.objects.active = target
    with pytest.raises(RuntimeError, match="Leave NLA tweak mode on 'Mocap' first"):
        bpy.ops.mocap.retarget()
    assert source.name != target.name


class _CountingLayout:
    """Stands in for a panel's layout: counts the widgets (props, operators, labels, lists) drawn."""

    def __init__(self):
        self.widgets = 0

    def __getattr__(self, name):
        def draw(*_args, **_kw):
            if name in {"prop", "operator", "label", "prop_search", "template_list", "menu"}:
                self.widgets += 1
            return (self, None) if name == "panel" else self

        return draw

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


def test_the_compact_tab_draws_a_fraction_of_the_widgets():
    """Drawn headless: the panels open by default show about a tenth of the tab's widgets (three tenths before)."""
    make_rig()
    panels = [p for p in extension_classes() if issubclass(p, bpy.types.Panel) and p.bl_space_type == "VIEW_3D"]
    counts = {}
    for panel in panels:
        stand_in = type("Drawn", (), {"layout": _CountingLayout()})()
        panel.draw(stand_in, bpy.context)
        counts[panel] = stand_in.layout.widgets
    shown = sum(n for p, n in counts.items() if "DEFAULT_CLOSED" not in getattr(p, "bl_options", set()))
    assert 0 < shown < 0.2 * sum(counts.values()), {p.__name__: n for p, n in counts.items()}
