"""`sortie serve-executor`: EMMOE-style planners drive the household executor over a socket."""

import json
import queue
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from sortie.core.errors import ConfigError
from sortie.missions.household.emmoe import SKILL_MODELS
from sortie.missions.household.spec import household_task
from sortie.missions.loading import load_suite
from sortie.remote.executor_server import ExecutorRequest, serve_executor
from sortie.run.store import Store
from sortie.testing.emmoe_planner import EmmoeStylePlanner, Turn, connect

SUITE = "household-smoke-v1"
FIRST, SECOND = "household-smoke-v1/0001", "household-smoke-v1/0002"


def expert_script(episode_id: str) -> list[tuple[str, str]]:
    """Return an episode's expert plan as an EMMOE planner would say it: words and model."""
    spec = next(e for e in load_suite(SUITE).episodes if e.episode_id == episode_id)
    task = household_task(spec)
    words = {
        name: entry.names[0] if entry.names else entry.kind for name, entry in task.objects.items()
    }
    script = []
    for step in task.expert:
        if step.action.value == "end":
            script.append(("End", "NoMaD"))
            continue
        verb = {"go_to": "Go to"}.get(step.action.value, step.action.value.capitalize())
        names = [words.get(step.target, step.target)]
        names += [words.get(step.place, step.place)] if step.place else []
        script.append((", ".join([verb, *names]), SKILL_MODELS[step.skill]))
    return script


def scripted(*episode_ids: str):
    """Return a planner's mind that says each episode's expert plan, told apart by the task."""
    scripts = {}
    for episode_id in episode_ids:
        spec = next(e for e in load_suite(SUITE).episodes if e.episode_id == episode_id)
        scripts[household_task(spec).instruction] = expert_script(episode_id)

    def decide(turn: Turn) -> tuple[str, str] | None:
        script = scripts[turn.task]
        return script[turn.round - 1] if turn.round <= len(script) else ("End", "NoMaD")

    return decide


@contextmanager
def executor(tmp_path, episodes=(FIRST,), timeout=20.0, port=0, **fields) -> Iterator[dict]:
    """Serve the executor in a thread for the block; yield its port, results and log lines."""
    ready: queue.Queue[str] = queue.Queue()
    state: dict = {"lines": [], "results": None, "error": None}
    request = ExecutorRequest(
        SUITE,
        episodes=episodes,
        port=port,
        store=tmp_path / "sortie.db",
        run_id="emmoe-test",
        views=tmp_path / "views",
        timeout=timeout,
        family_settings={"skills": "perfect"},
        **fields,
    )

    def serve() -> None:
        try:
            state["results"] = serve_executor(request, state["lines"].append, ready.put)
        except Exception as error:  # noqa: BLE001 - the test reads it
            state["error"] = error
            ready.put("")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    address = ready.get(timeout=60)
    state["port"] = int(address.rsplit(":", 1)[1]) if address else None
    state["thread"] = thread
    yield state
    thread.join(timeout=120)


def test_an_emmoe_style_planner_plays_two_smoke_episodes_that_are_stored_as_successes(tmp_path):
    """Two household episodes driven over the socket succeed and are stored under the run."""
    with executor(tmp_path, episodes=(FIRST, SECOND)) as served:
        planner = EmmoeStylePlanner(scripted(FIRST, SECOND))
        planner.play(connect(served["port"]), episodes=2)
    assert served["error"] is None
    with Store(tmp_path / "sortie.db") as store:
        outcomes = sorted(e.outcome for e in store.episodes("emmoe-test"))
    assert outcomes == ["success", "success"]


def test_every_round_brings_four_views_saved_under_emmoes_file_names(tmp_path):
    """The first round's paths are subtask1_front/left/back/right.png, saved beside info.txt."""
    with executor(tmp_path) as served:
        played = EmmoeStylePlanner(scripted(FIRST)).play(connect(served["port"]), episodes=1)
    first = played[0].images[0]
    assert [p.name for p in first] == [
        f"subtask1_{d}.png" for d in ("front", "left", "back", "right")
    ]
    assert all(p.is_file() for p in first) and (first[0].parent / "info.txt").is_file()


def test_a_successful_round_is_answered_none_and_success(tmp_path):
    """The first subtask of the expert's plan is answered ["None", "success"]."""
    with executor(tmp_path) as served:
        played = EmmoeStylePlanner(scripted(FIRST)).play(connect(served["port"]), episodes=1)
    assert played[0].answers[0] == ("None", "success")


def test_a_subtask_on_a_missing_object_gets_emmoes_f2_feedback(tmp_path):
    """Picking a thing the house lacks is answered with EMMOE's "does not exist" string."""
    script = iter([("Pick, unicorn", "RT-1-X"), ("End", "NoMaD")])
    with executor(tmp_path) as served:
        played = EmmoeStylePlanner(lambda turn: next(script)).play(connect(served["port"]), 1)
    assert played[0].answers[0] == ("unicorn does not exist! Please choose another object", "fail")


def test_a_planner_that_gives_up_ends_the_episode_as_no_answer(tmp_path):
    """A bare End (no readable answer) is answered as an end and stored as no_answer."""
    with executor(tmp_path) as served:
        played = EmmoeStylePlanner(lambda turn: None).play(connect(served["port"]), 1)
    assert played[0].sent == ["End"] and played[0].answers == [("None", "success")]
    with Store(tmp_path / "sortie.db") as store:
        (episode,) = store.episodes("emmoe-test")
    assert episode.failure_reason == "no_answer"


def test_a_malformed_line_gets_an_error_answer_and_the_connection_closed(tmp_path):
    """A message without the three |-separated fields is answered with an error, then closed."""
    with executor(tmp_path) as served:
        sock = connect(served["port"])
        sock.recv(1024)
        sock.sendall(b"Pick apple")
        feedback, signal = json.loads(sock.recv(1024))
        closed = sock.recv(1024) == b""
        sock.close()
        EmmoeStylePlanner(scripted(FIRST)).play(connect(served["port"]), episodes=1)
    assert (signal, closed) == ("fail", True) and "3 fields" in feedback


def test_a_silent_planner_is_answered_an_error_and_dropped_and_the_next_is_served(tmp_path):
    """A planner that never answers gets one error line, then is dropped; the next one plays."""
    with executor(tmp_path, timeout=1.0) as served:
        silent = connect(served["port"])
        silent.recv(1024)
        feedback, signal = json.loads(silent.recv(1024))  # after the timeout
        dropped = silent.recv(1024) == b""
        silent.close()
        EmmoeStylePlanner(scripted(FIRST)).play(connect(served["port"]), episodes=1)
    assert (signal, dropped) == ("fail", True) and "said nothing for 1 s" in feedback
    assert served["error"] is None
    assert any("said nothing for 1 s" in line for line in served["lines"])


def test_an_episode_left_unfinished_is_not_stored(tmp_path):
    """A planner that leaves mid-episode leaves nothing in the store; the next one's is kept."""
    with executor(tmp_path) as served:
        sock = connect(served["port"])
        sock.recv(1024)
        sock.sendall(b"Go to, table|NoMaD|None")
        sock.recv(1024)
        sock.close()
        EmmoeStylePlanner(scripted(FIRST)).play(connect(served["port"]), episodes=1)
    with Store(tmp_path / "sortie.db") as store:
        episodes = store.episodes("emmoe-test")
    assert [(e.outcome, e.steps) for e in episodes] == [("success", 5)]


def test_a_host_that_is_not_loopback_is_refused_unless_asked_for(tmp_path):
    """Listening on 0.0.0.0 without allow_remote is refused before anything is served."""
    # An unknown episode too: were the host let through, the run would be refused for it.
    request = ExecutorRequest(SUITE, ("nope",), host="0.0.0.0", store=tmp_path / "s.db")
    with pytest.raises(ConfigError, match="not loopback"):
        serve_executor(request, print)


def test_the_executor_dials_a_planner_that_listens_as_emmoes_do(tmp_path):
    """With connect, sortie connects to a listening planner and plays the episode with it."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with executor(tmp_path, connect=True, port=port):
            sock, _ = server.accept()
            EmmoeStylePlanner(scripted(FIRST)).play(sock, episodes=1)
    with Store(tmp_path / "sortie.db") as store:
        assert [e.outcome for e in store.episodes("emmoe-test")] == ["success"]


def test_after_a_refused_planner_only_the_next_planners_episode_is_stored(tmp_path):
    """The episode a malformed line broke off is not stored; the next planner's play of it is."""
    with executor(tmp_path) as served:
        sock = connect(served["port"])
        sock.recv(1024)
        sock.sendall(b"Go to, table|NoMaD")
        sock.recv(1024)
        sock.close()
        EmmoeStylePlanner(scripted(FIRST)).play(connect(served["port"]), episodes=1)
    with Store(tmp_path / "sortie.db") as store:
        assert [(e.outcome, e.steps) for e in store.episodes("emmoe-test")] == [("success", 5)]


def test_a_message_longer_than_1024_bytes_is_refused(tmp_path):
    """A message too long for EMMOE's reads gets an error answer naming the limit."""
    with executor(tmp_path) as served:
        sock = connect(served["port"])
        sock.recv(1024)
        sock.sendall(b"Go to, " + b"x" * 1100 + b"|NoMaD|None")
        feedback, signal = json.loads(sock.recv(1024))
        sock.close()
        EmmoeStylePlanner(scripted(FIRST)).play(connect(served["port"]), episodes=1)
    assert signal == "fail" and "longer than 1024 bytes" in feedback


def test_views_of_a_broken_off_try_are_cleared_when_the_episode_is_played_again(tmp_path):
    """A replayed episode's folder holds only its own rounds' views, not a left try's."""
    with executor(tmp_path) as served:
        sock = connect(served["port"])
        for _ in range(6):
            sock.recv(1024)
            sock.sendall(b"Go to, table|NoMaD|None")
            sock.recv(1024)
            sock.sendall(b"feedback received!")
        sock.recv(1024)  # the seventh round's views, then the planner leaves
        sock.close()
        played = EmmoeStylePlanner(scripted(FIRST)).play(connect(served["port"]), episodes=1)
    rounds = {p.name.split("_")[0] for p in played[0].images[0][0].parent.glob("*.png")}
    assert rounds == {f"subtask{k}" for k in range(1, 6)}


def test_a_round_the_executor_fails_is_answered_so_the_planner_stays_in_step(tmp_path, monkeypatch):
    """A backend error mid-round answers that round with an error; the episode is stored so."""
    from sortie.missions.household.mission import HouseholdMission

    steps = {"n": 0}
    real = HouseholdMission.advance  # what the episode loop calls each step

    def failing_second(self, *args, **kwargs):
        steps["n"] += 1
        if steps["n"] == 2:
            raise RuntimeError("the simulator crashed")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(HouseholdMission, "advance", failing_second)
    first, second = expert_script(FIRST)[:2]
    with executor(tmp_path) as served:
        sock = connect(served["port"])
        answers = []
        for words, model in (first, second):
            sock.recv(1024)  # the round's view paths
            sock.sendall(f"{words}|{model}|None".encode())
            answers.append(tuple(json.loads(sock.recv(1024))))
            sock.sendall(b"feedback received!")
        sock.close()
    assert answers[0] == ("None", "success")
    assert answers[1] == ("error: the executor failed this round (backend_error)", "fail")
    with Store(tmp_path / "sortie.db") as store:
        (episode,) = store.episodes("emmoe-test")
    assert episode.failure_reason == "backend_error"
