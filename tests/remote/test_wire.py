"""The wire format: images travel bit for bit, briefs and actions round-trip, bad input is named."""

import json

import numpy as np
import pytest

from sortie.core.actions import FlightPrimitive, Interaction
from sortie.core.observation import IMAGE_SENSORS
from sortie.core.serialize import action_from_dict
from sortie.missions.aerial.vocabulary import TaskActionKind
from sortie.remote import wire
from sortie.remote.convert import (
    action_to_wire,
    brief_from_wire,
    brief_to_wire,
    observation_from_wire,
    observation_to_wire,
)
from sortie.remote.wire import ActRequest, WireError, decode_image, encode_image, parse_message


@pytest.mark.parametrize(
    "array",
    [
        np.arange(48, dtype=np.uint8).reshape(4, 4, 3),
        np.array([[0.5, np.inf], [1e-7, 123.25]], dtype=np.float32),
        np.array([[0, -1], [2**31 - 1, 7]], dtype=np.int32),
    ],
    ids=["rgb", "depth", "semantic"],
)
def test_an_image_comes_back_bit_for_bit(array):
    """RGB, depth (inf included) and semantic ids decode to the very array that was sent."""
    back = decode_image(encode_image(array))
    assert back.dtype == array.dtype and np.array_equal(back, array)


def test_an_image_whose_png_does_not_match_its_shape_is_refused():
    """An image whose shape field lies about the PNG is a 422 naming both shapes."""
    image = encode_image(np.zeros((4, 4, 3), dtype=np.uint8)).model_copy(
        update={"shape": (5, 4, 3)}
    )
    with pytest.raises(WireError, match=r"PNG is 4×4, message says 4×5") as caught:
        decode_image(image)
    assert caught.value.status == 422


def test_a_png_is_checked_before_it_is_unpacked():
    """A huge declared size is refused, and a 16-bit PNG posing as uint8 is refused by mode."""
    import base64
    import io

    from PIL import Image as PILImage

    huge = encode_image(np.zeros((4, 4), dtype=np.uint8)).model_copy(
        update={"shape": (50_000, 50_000)}
    )
    with pytest.raises(WireError, match="at most"):
        decode_image(huge)
    buffer = io.BytesIO()
    PILImage.fromarray(np.zeros((4, 4), dtype=np.uint16)).save(buffer, format="PNG")
    wide = encode_image(np.zeros((4, 4), dtype=np.uint8)).model_copy(
        update={"data": base64.b64encode(buffer.getvalue()).decode()}
    )
    with pytest.raises(WireError, match="PNG mode"):
        decode_image(wide)


def test_a_brief_round_trips_with_its_images_and_labels(rescue_start):
    """Text, clue, stages, limits, camera, semantic labels and reference images survive."""
    brief, _ = rescue_start
    back = brief_from_wire(
        wire.BriefMessage.model_validate_json(brief_to_wire(brief).model_dump_json())
    )
    assert (back.text, back.clue, back.stages, back.limits, back.camera) == (
        brief.text,
        brief.clue,
        brief.stages,
        brief.limits,
        brief.camera,
    )
    assert back.semantic_classes == brief.semantic_classes and brief.images
    assert all(np.array_equal(back.images[k], v) for k, v in brief.images.items())


def test_every_goal_image_of_a_rescue_brief_travels(rescue_start):
    """The stretcher's goal image reaches a remote agent beside the casualty's reference."""
    brief, _ = rescue_start
    message = wire.BriefMessage.model_validate_json(brief_to_wire(brief).model_dump_json())
    assert set(message.images) == {"reference", "stretcher"}
    stretcher = message.image("stretcher")
    assert stretcher is not None and np.array_equal(stretcher, brief.images["stretcher"])


def test_an_observation_round_trips_with_all_three_images(rescue_start):
    """The ego RGB, depth and semantic images and the agent's state survive the wire."""
    _, observation = rescue_start
    message = ActRequest(session="s", step=0, observation=observation_to_wire(observation))
    back = observation_from_wire(
        parse_message(ActRequest, message.model_dump_json().encode()).observation
    )
    for sensor in IMAGE_SENSORS:
        assert np.array_equal(getattr(back.frames, sensor), getattr(observation.frames, sensor))
    assert (back.carrying, back.step, back.time_left) == (False, 0, observation.time_left)


def test_the_brief_carries_its_familys_action_schema(rescue_start):
    """A rescue brief's action schema names move and interact, not the drone's actions."""
    text = json.dumps(brief_to_wire(rescue_start[0]).action_schema)
    assert '"move"' in text and '"interact"' in text and '"fly"' not in text


def _example(action) -> dict:
    """Return the required fields of ``action`` with valid values."""
    values = {"kind": "grab" if action.__name__ == "Interact" else "done", "primitive": "up"}
    values |= {"magnitude": 1.0, "action": "pick", "target": "mug", "skill": "s"}
    values |= {"raw": "?", "error": "unreadable"}
    import dataclasses

    required = [f.name for f in dataclasses.fields(action) if f.default is dataclasses.MISSING]
    return {name: values[name] for name in required}


def test_the_wire_spells_actions_as_sortie_does():
    """Each wire action is its sortie action's fields plus its type; enums keep their values."""
    import dataclasses

    from sortie.core.vocabulary import WORDS

    for name, action in WORDS.actions().items():
        model = wire.WIRE_ACTIONS[name]
        assert list(model.model_fields) == ["type", *(f.name for f in dataclasses.fields(action))]
        assert wire.read_action({"type": name, **_example(action)}).__class__ is model
    schema = json.dumps(wire.ACTIONS.json_schema())
    for enum in (Interaction, FlightPrimitive, TaskActionKind):
        assert all(f'"{member.value}"' in schema for member in enum)


@pytest.mark.parametrize(
    "action",
    [
        {"type": "move", "turn": 10.0, "speed": 1.0, "pitch": None},
        {"type": "interact", "kind": "open_door"},
        {"type": "fly", "primitive": "turn_left", "magnitude": 15.0, "report": None},
        {"type": "task", "kind": "done", "report": "a red car"},
    ],
)
def test_an_action_reads_back_as_the_same_sortie_action(action):
    """Each family's actions go to the wire and back unchanged."""
    sortie_action = action_from_dict(action)
    assert action_from_dict(action_to_wire(sortie_action).model_dump()) == sortie_action


@pytest.mark.parametrize(
    ("action", "found"),
    [
        ({"type": "jump"}, "jump"),
        ({"type": "interact", "kind": "kick"}, "kind"),
        ({"type": "move", "turn": "left"}, "turn"),
        ({"type": "move", "speed": 1.0, "extra": 1}, "extra"),
    ],
)
def test_an_unknown_action_is_a_422_that_says_what_was_wrong(action, found):
    """An unknown type, enum value, wrong type or extra field is refused, naming it."""
    with pytest.raises(WireError, match=found) as caught:
        wire.read_action(action)
    assert (caught.value.status, caught.value.code) == (422, "invalid_action")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, "malformed"),
        (b"[1, 2]", 400, "malformed"),
        (b'{"schema_version": 1, "agent": "x"}', 400, "schema_version"),
        (b'{"agent": "x"}', 400, "schema_version"),
        (b'{"schema_version": 2, "agent": 3}', 422, "invalid"),
        (
            b'{"schema_version": 2, "agent": "x", "padding": "' + b"x" * 2000 + b'"}',
            413,
            "too_large",
        ),
    ],
    ids=["not-json", "not-object", "version-1", "no-version", "wrong-type", "too-large"],
)
def test_a_bad_message_is_refused_with_its_status_and_code(body, status, code):
    """Malformed, oversized, other-version and invalid messages each get their own error."""
    with pytest.raises(WireError) as caught:
        parse_message(wire.Hello, body, limit=1000)
    assert (caught.value.status, caught.value.code) == (status, code)


def test_a_wrong_version_names_both_versions():
    """The schema_version error says which version came and which one this end speaks."""
    with pytest.raises(WireError, match=r"schema_version 1 is not spoken here; this end speaks 2"):
        parse_message(wire.Hello, b'{"schema_version": 1, "agent": "x"}')


def test_a_household_brief_and_observation_round_trip(tmp_path):
    """The offered actions and skills, the four views, the task, history and detections."""
    from sortie.backends.embedded import EmbeddedBackend
    from sortie.missions.household.mission import HouseholdMission
    from sortie.missions.household.settings import HouseholdSettings
    from sortie.missions.household.vocabulary import Subtask
    from sortie.missions.loading import load_suite

    backend = EmbeddedBackend(body="manipulator", sensors=("rgb",))
    mission = HouseholdMission(backend, settings=HouseholdSettings(skills="perfect"))
    spec = load_suite("household-smoke-v1").episodes[0]
    mission.reset(spec, seed=0)
    observation, _ = mission.step(Subtask("go_to", "table_0", "image_nav"))
    brief = mission.brief
    back_brief = brief_from_wire(
        wire.BriefMessage.model_validate_json(brief_to_wire(brief).model_dump_json())
    )
    assert (back_brief.actions, back_brief.skills) == (brief.actions, brief.skills)
    assert '"subtask"' in json.dumps(brief_to_wire(brief).action_schema)
    message = ActRequest(session="s", step=1, observation=observation_to_wire(observation))
    back = observation_from_wire(
        parse_message(ActRequest, message.model_dump_json().encode()).observation
    )
    assert len(back.views) == 4 and all(
        np.array_equal(a.rgb, b.rgb) for a, b in zip(back.views, observation.views, strict=True)
    )
    same = ("task", "inventory", "feedback", "code", "detections", "round", "rounds_left")
    assert all(getattr(back, name) == getattr(observation, name) for name in same)
    (sent,) = observation.history
    assert back.history == (sent.model_copy(update={"attempts": []}),)
    backend.close()


def test_a_household_round_of_an_unknown_code_is_refused():
    """A history round whose error code sortie does not know is a 422 naming the round."""
    from sortie.missions.household.messages import HouseholdMessage, RoundMessage

    body = {"round": 1, "action": "pick", "status": "failure", "code": "Z9"}
    message = wire.ObservationMessage(
        carrying=False,
        step=1,
        clock=1.0,
        time_left=1.0,
        household=HouseholdMessage(history=[RoundMessage(**body)]),
    )
    with pytest.raises(WireError, match="household round 1: code"):
        observation_from_wire(message)


def test_a_four_channel_uint8_image_comes_back_bit_for_bit():
    """A uint8 (H, W, 4) image, as the docstring allows, survives the round trip."""
    array = np.arange(64, dtype=np.uint8).reshape(4, 4, 4)
    assert np.array_equal(decode_image(encode_image(array)), array)


@pytest.mark.parametrize(
    ("dtype", "shape"),
    [("uint8", ()), ("uint8", (4,)), ("uint8", (4, 4, 2)), ("int32", (4, 4, 4)), ("float32", ())],
)
def test_an_image_of_a_shape_not_allowed_is_a_422_naming_the_shapes(dtype, shape):
    """Shapes like [] or (H, W, 2) are refused as invalid, not a server error."""
    image = encode_image(np.zeros((4, 4), dtype=np.uint8)).model_copy(
        update={"dtype": dtype, "shape": shape}
    )
    with pytest.raises(WireError, match=r"allowed: \(H, W\)") as caught:
        decode_image(image)
    assert caught.value.status == 422


def test_a_negative_seed_is_a_422(rescue_start):
    """A reset whose seed is negative is refused as invalid before any episode starts."""
    reset = wire.ResetRequest(session="s", seed=3, brief=brief_to_wire(rescue_start[0]))
    body = reset.model_dump(mode="json") | {"seed": -1}
    with pytest.raises(WireError, match="seed") as caught:
        parse_message(wire.ResetRequest, json.dumps(body).encode())
    assert caught.value.status == 422


def test_a_brief_of_many_huge_images_is_refused_before_any_is_unpacked(rescue_start):
    """Eight 4096 x 4096 PNGs in one brief (577 MB decoded) are a 422 naming the budget."""
    image = encode_image(np.zeros((4, 4), dtype=np.uint8)).model_copy(
        update={"shape": (4096, 4096)}
    )
    reset = wire.ResetRequest(session="s", seed=3, brief=brief_to_wire(rescue_start[0]))
    body = reset.model_dump(mode="json")
    for count, said in ((8, r"pixels together; at most 16777216"), (9, r"9 images; at most 8")):
        body["brief"]["images"] = {f"i{k}": image.model_dump(mode="json") for k in range(count)}
        with pytest.raises(WireError, match=said) as caught:
            parse_message(wire.ResetRequest, json.dumps(body).encode())
        assert caught.value.status == 422
